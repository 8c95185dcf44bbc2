import type { Readable } from 'node:stream';
import { errors as undiciErrors, request, type Dispatcher } from 'undici';
import { retryAfterMs } from './backoff.js';
import { codeForStatus, messageFromBody, RedfishError } from './errors.js';
import { isCertificateError } from './tls.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface RedfishResponse<T = unknown> {
  status: number;
  headers: ResponseHeaders;
  body: T;
}

/** A request body that can be produced again for a retry (a stream can be read only once). */
export interface BodySource {
  contentType: string;
  length: number;
  open(): string | Buffer | Readable;
}

export interface ExchangeSpec {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body?: BodySource;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Whether a failed exchange may be sent again.
 * - `safe`: the BMC did not act on it (no connection was made, or it answered 503), so any method may be resent.
 * - `idempotent`: the request may have reached the BMC; only a request that is harmless twice may be resent.
 * - `never`: resending cannot change the outcome.
 */
export type RetryClass = 'safe' | 'idempotent' | 'never';

export class ExchangeFailure extends Error {
  constructor(
    readonly error: RedfishError,
    readonly retry: RetryClass,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
  }
}

// Errors raised before a byte of the request left this host.
const notConnectedCodes = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL']);

/** One HTTP exchange with the BMC; every failure comes back as an ExchangeFailure saying whether it may be retried. */
export async function exchange(dispatcher: Dispatcher, bmc: string, spec: ExchangeSpec, maxRetryAfterMs: number): Promise<RedfishResponse> {
  const uri = spec.url.pathname;
  const deadline = AbortSignal.timeout(spec.timeoutMs);
  const signal = spec.signal ? AbortSignal.any([spec.signal, deadline]) : deadline;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(spec.url, {
      method: spec.method,
      dispatcher,
      headers: {
        accept: 'application/json',
        'odata-version': '4.0',
        ...spec.headers,
        ...(spec.body ? { 'content-type': spec.body.contentType, 'content-length': String(spec.body.length) } : {}),
      },
      ...(spec.body ? { body: spec.body.open() } : {}),
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
      signal,
    });
  } catch (err) {
    throw classifyTransportError(err, bmc, uri, spec, deadline);
  }
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    throw classifyTransportError(err, bmc, uri, spec, deadline);
  }
  const body = text ? parseJson(text) : undefined;
  if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, headers: res.headers, body };
  const error = new RedfishError(codeForStatus(res.statusCode), bmc, uri, messageFromBody(body) ?? `HTTP ${res.statusCode}`, res.statusCode);
  // 503 is the BMC refusing work (busy, rebooting, session table full): it did not act on the request.
  if (res.statusCode === 503) throw new ExchangeFailure(error, 'safe', retryAfterMs(res.headers['retry-after'], maxRetryAfterMs));
  throw new ExchangeFailure(error, 'never');
}

function classifyTransportError(err: unknown, bmc: string, uri: string, spec: ExchangeSpec, deadline: AbortSignal): unknown {
  // The caller cancelled: not a BMC failure, so surface the caller's own reason.
  if (spec.signal?.aborted) return spec.signal.reason;
  const message = (err as Error)?.message ?? String(err);
  if (deadline.aborted) {
    return new ExchangeFailure(new RedfishError('Timeout', bmc, uri, `no complete answer within ${spec.timeoutMs} ms`), 'idempotent');
  }
  if (isCertificateError(err)) {
    return new ExchangeFailure(new RedfishError('FailedPrecondition', bmc, uri, `TLS verification failed: ${message}`), 'never');
  }
  if (err instanceof undiciErrors.ConnectTimeoutError) {
    return new ExchangeFailure(new RedfishError('Timeout', bmc, uri, message), 'safe');
  }
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new ExchangeFailure(new RedfishError('Timeout', bmc, uri, message), 'idempotent');
  }
  const code = (err as { code?: unknown } | null)?.code;
  const retry: RetryClass = typeof code === 'string' && notConnectedCodes.has(code) ? 'safe' : 'idempotent';
  return new ExchangeFailure(new RedfishError('Unavailable', bmc, uri, typeof code === 'string' ? `${code}: ${message}` : message), retry);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

import { errors as undiciErrors, request, type Dispatcher } from 'undici';
import { kindForStatus, messageFromBody, NvueError } from './errors.js';
import { retryAfterMs } from './timing.js';
import { isCertificateError } from './tls.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH';
export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface NvueResponse<T = unknown> {
  status: number;
  headers: ResponseHeaders;
  body: T;
}

export interface ExchangeSpec {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  json?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Whether a failed exchange may be sent again.
 * - `safe`: the switch did not act on it (no connection, or it answered 503): any method may be resent.
 * - `idempotent`: it may have reached the switch; only a request harmless twice may be resent.
 * - `never`: resending cannot change the outcome.
 */
export type RetryClass = 'safe' | 'idempotent' | 'never';

export class ExchangeFailure extends Error {
  constructor(
    readonly error: NvueError,
    readonly retry: RetryClass,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
  }
}

// Failures before a byte of the request left this host.
const notConnectedCodes = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL']);

/** One HTTP exchange with the switch; every failure comes back as an ExchangeFailure saying whether it may be retried. */
export async function exchange(dispatcher: Dispatcher, switchId: string, spec: ExchangeSpec, maxRetryAfterMs: number): Promise<NvueResponse> {
  const uri = spec.url.pathname + spec.url.search;
  const fail = (kind: NvueError['kind'], text: string, retry: RetryClass, extra: { status?: number; cause?: unknown } = {}) =>
    new ExchangeFailure(new NvueError(kind, switchId, spec.method, uri, text, extra), retry);
  const deadline = AbortSignal.timeout(spec.timeoutMs);
  const signal = spec.signal ? AbortSignal.any([spec.signal, deadline]) : deadline;
  let status: number;
  let headers: ResponseHeaders;
  let text: string;
  try {
    const res = await request(spec.url, {
      method: spec.method,
      dispatcher,
      headers: { accept: 'application/json', ...spec.headers, ...(spec.json !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(spec.json !== undefined ? { body: spec.json } : {}),
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
      signal,
    });
    status = res.statusCode;
    headers = res.headers;
    text = await res.body.text();
  } catch (err) {
    // The caller cancelled: not a switch failure, so surface the caller's own reason.
    if (spec.signal?.aborted) throw spec.signal.reason;
    const message = (err as Error)?.message ?? String(err);
    if (deadline.aborted) throw fail('Timeout', `no complete answer within ${spec.timeoutMs} ms`, 'idempotent', { cause: err });
    if (isCertificateError(err)) throw fail('TlsVerification', `TLS verification failed: ${message}`, 'never', { cause: err });
    if (err instanceof undiciErrors.ConnectTimeoutError) throw fail('Timeout', message, 'safe', { cause: err });
    if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) throw fail('Timeout', message, 'idempotent', { cause: err });
    const code = (err as { code?: unknown } | null)?.code;
    const connected = !(typeof code === 'string' && notConnectedCodes.has(code));
    throw fail('Unavailable', typeof code === 'string' ? `${code}: ${message}` : message, connected ? 'idempotent' : 'safe', { cause: err });
  }
  const body = text ? parseJson(text) : undefined;
  if (status >= 200 && status < 300) return { status, headers, body };
  const failure = fail(kindForStatus(status), messageFromBody(body) ?? `HTTP ${status}`, status === 503 ? 'safe' : 'never', { status });
  // 503 is the switch refusing work (busy, starting up): it did not act on the request.
  if (status === 503) throw new ExchangeFailure(failure.error, 'safe', retryAfterMs(headers['retry-after'], maxRetryAfterMs));
  throw failure;
}

/** JSON when it parses; NVUE answers some actions with a bare id in text/plain. */
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

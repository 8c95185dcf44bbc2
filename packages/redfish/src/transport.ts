import {
  classifyTransportError,
  parseJsonOrText,
  readBodyText,
  requestSignal,
  ResponseTooLargeError,
  retryAfterMs,
  type ResponseHeaders,
  type RetryClass,
} from '@fleet/http';
import { request, type Dispatcher } from 'undici';
import { codeForStatus, messageFromBody, RedfishError, type RedfishErrorCode } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RedfishResponse<T = unknown> {
  status: number;
  headers: ResponseHeaders;
  body: T;
}

/**
 * A request body that can be produced again for a retry (a stream can be read only once). An
 * iterable is consumed by undici's writer, which pulls the next chunk only once the socket has
 * taken the previous one (waiting for 'drain' when write() says so): a source may reuse a
 * chunk's memory two pulls later (multipart.ts does).
 */
export interface BodySource {
  contentType: string;
  length: number;
  open(): string | Buffer | AsyncIterable<Uint8Array>;
}

export interface ExchangeSpec {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body?: BodySource;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Answers longer than this are refused. */
  maxResponseBytes: number;
}

export class ExchangeFailure extends Error {
  constructor(
    readonly error: RedfishError,
    readonly retry: RetryClass,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
  }
}

/** One HTTP exchange with the BMC; every failure comes back as an ExchangeFailure saying whether it may be retried. */
export async function exchange(
  dispatcher: Dispatcher,
  bmc: string,
  spec: ExchangeSpec,
  maxRetryAfterMs: number,
): Promise<RedfishResponse> {
  const { deadline, signal, release } = requestSignal(spec.timeoutMs, spec.signal);
  try {
    return await send(dispatcher, bmc, spec, maxRetryAfterMs, deadline, signal);
  } finally {
    release();
  }
}

async function send(
  dispatcher: Dispatcher,
  bmc: string,
  spec: ExchangeSpec,
  maxRetryAfterMs: number,
  deadline: AbortSignal,
  signal: AbortSignal,
): Promise<RedfishResponse> {
  const uri = spec.url.pathname;
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
      // undici takes async iterables (docs/api/Dispatcher.md, `body`), though its types list only streams.
      ...(spec.body ? { body: spec.body.open() as Dispatcher.RequestOptions['body'] } : {}),
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
      signal,
    });
  } catch (err) {
    throw transportFailure(err, bmc, uri, spec, deadline);
  }
  let text: string;
  try {
    text = await readBodyText(res.body, spec.maxResponseBytes);
  } catch (err) {
    if (err instanceof ResponseTooLargeError)
      throw new ExchangeFailure(new RedfishError('Protocol', bmc, uri, err.message), 'never');
    throw transportFailure(err, bmc, uri, spec, deadline);
  }
  const body = text ? parseJsonOrText(text) : undefined;
  if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, headers: res.headers, body };
  const error = new RedfishError(
    codeForStatus(res.statusCode),
    bmc,
    uri,
    messageFromBody(body) ?? `HTTP ${res.statusCode}`,
    res.statusCode,
  );
  // 503 is the BMC refusing work (busy, rebooting, session table full): it did not act on the request.
  if (res.statusCode === 503)
    throw new ExchangeFailure(error, 'safe', retryAfterMs(res.headers['retry-after'], maxRetryAfterMs));
  throw new ExchangeFailure(error, 'never');
}

/** A TLS refusal is a precondition the site's settings must change, in the Redfish client's terms. */
const codeForTransport = {
  Timeout: 'Timeout',
  TlsVerification: 'FailedPrecondition',
  Unavailable: 'Unavailable',
} as const satisfies Record<string, RedfishErrorCode>;

function transportFailure(err: unknown, bmc: string, uri: string, spec: ExchangeSpec, deadline: AbortSignal): unknown {
  const failure = classifyTransportError(err, { caller: spec.signal, deadline, timeoutMs: spec.timeoutMs });
  // The caller cancelled: not a BMC failure, so surface the caller's own reason.
  if ('cancelled' in failure) return failure.cancelled;
  return new ExchangeFailure(
    new RedfishError(codeForTransport[failure.kind], bmc, uri, failure.message),
    failure.retry,
  );
}

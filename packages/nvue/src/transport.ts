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
import { kindForStatus, messageFromBody, NvueError } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH';

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
  /** Answers longer than this are refused. */
  maxResponseBytes: number;
}

export class ExchangeFailure extends Error {
  constructor(
    readonly error: NvueError,
    readonly retry: RetryClass,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
  }
}

/**
 * One HTTP exchange with the switch; every failure comes back as an ExchangeFailure saying whether it may be retried.
 */
export async function exchange(
  dispatcher: Dispatcher,
  switchId: string,
  spec: ExchangeSpec,
  maxRetryAfterMs: number,
): Promise<NvueResponse> {
  const uri = spec.url.pathname + spec.url.search;
  const fail = (
    kind: NvueError['kind'],
    text: string,
    retry: RetryClass,
    extra: { status?: number; cause?: unknown } = {},
  ) => new ExchangeFailure(new NvueError(kind, switchId, spec.method, uri, text, extra), retry);
  const { deadline, signal, release } = requestSignal(spec.timeoutMs, spec.signal);
  let status: number;
  let headers: ResponseHeaders;
  let text: string;
  try {
    const res = await request(spec.url, {
      method: spec.method,
      dispatcher,
      headers: {
        accept: 'application/json',
        ...spec.headers,
        ...(spec.json !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(spec.json !== undefined ? { body: spec.json } : {}),
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
      signal,
    });
    status = res.statusCode;
    headers = res.headers;
    text = await readBodyText(res.body, spec.maxResponseBytes);
  } catch (err) {
    if (err instanceof ResponseTooLargeError) throw fail('Protocol', err.message, 'never');
    const failure = classifyTransportError(err, { caller: spec.signal, deadline, timeoutMs: spec.timeoutMs });
    // The caller cancelled: not a switch failure, so surface the caller's own reason.
    if ('cancelled' in failure) throw failure.cancelled;
    throw fail(failure.kind, failure.message, failure.retry, { cause: failure.cause });
  } finally {
    release();
  }
  // NVUE answers some actions with a bare id in text/plain.
  const body = text ? parseJsonOrText(text) : undefined;
  if (status >= 200 && status < 300) return { status, headers, body };
  const failure = fail(
    kindForStatus(status),
    messageFromBody(body) ?? `HTTP ${status}`,
    status === 503 ? 'safe' : 'never',
    { status },
  );
  // 503 is the switch refusing work (busy, starting up): it did not act on the request.
  if (status === 503)
    throw new ExchangeFailure(failure.error, 'safe', retryAfterMs(headers['retry-after'], maxRetryAfterMs));
  throw failure;
}

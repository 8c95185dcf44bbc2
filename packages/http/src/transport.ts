import { setMaxListeners } from 'node:events';
import { errors as undiciErrors } from 'undici';
import { isCertificateError } from './tls.js';

export type ResponseHeaders = Record<string, string | string[] | undefined>;

/**
 * Whether a failed exchange may be sent again.
 * - `safe`: the device did not act on it (no connection was made, or it answered 503): any method may be resent.
 * - `idempotent`: the request may have reached the device; only a request harmless twice may be resent.
 * - `never`: resending cannot change the outcome.
 */
export type RetryClass = 'safe' | 'idempotent' | 'never';

/** A failure below HTTP, in words each client turns into its own typed error. */
export interface TransportFailure {
  kind: 'Timeout' | 'TlsVerification' | 'Unavailable';
  message: string;
  retry: RetryClass;
  cause: unknown;
}

// Failures before a byte of the request left this host.
const notConnectedCodes = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);

/**
 * The request's own deadline, combined with the caller's signal; `release()` (call it once the exchange is over, body
 * read) stops the deadline's timer and unhooks the caller. Not AbortSignal.timeout and AbortSignal.any: on Node 20 the
 * caller's signal keeps a WeakRef to every signal combined with it until the caller itself is collected, and an
 * activity's cancellation signal lives as long as the activity (the satellite's observer: an hour, three requests a
 * device a cycle), and a timeout signal's timer outlives its request by the whole timeout.
 */
export function requestSignal(
  timeoutMs: number,
  caller: AbortSignal | undefined,
): { deadline: AbortSignal; signal: AbortSignal; release: () => void } {
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    timeoutMs,
  );
  timer.unref();
  if (!caller) return { deadline: deadline.signal, signal: deadline.signal, release: () => clearTimeout(timer) };
  const either = new AbortController();
  const onCaller = () => either.abort(caller.reason);
  if (caller.aborted) either.abort(caller.reason);
  else {
    // One listener per request in flight (the observer has a hundred), each removed when it ends: no leak to warn of.
    setMaxListeners(0, caller);
    caller.addEventListener('abort', onCaller, { once: true });
  }
  deadline.signal.addEventListener('abort', () => either.abort(deadline.signal.reason), { once: true });
  return {
    deadline: deadline.signal,
    signal: either.signal,
    release: () => {
      clearTimeout(timer);
      caller.removeEventListener('abort', onCaller);
    },
  };
}

/**
 * What a thrown request error means for a retry. A caller that cancelled gets its own reason
 * back (`cancelled`), since that is no failure of the device.
 */
export function classifyTransportError(
  err: unknown,
  ctx: { caller: AbortSignal | undefined; deadline: AbortSignal; timeoutMs: number },
): { cancelled: unknown } | TransportFailure {
  if (ctx.caller?.aborted) return { cancelled: ctx.caller.reason };
  const message = (err as Error)?.message ?? String(err);
  if (ctx.deadline.aborted)
    return {
      kind: 'Timeout',
      message: `no complete answer within ${ctx.timeoutMs} ms`,
      retry: 'idempotent',
      cause: err,
    };
  if (isCertificateError(err))
    return { kind: 'TlsVerification', message: `TLS verification failed: ${message}`, retry: 'never', cause: err };
  if (err instanceof undiciErrors.ConnectTimeoutError) return { kind: 'Timeout', message, retry: 'safe', cause: err };
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError)
    return { kind: 'Timeout', message, retry: 'idempotent', cause: err };
  const code = (err as { code?: unknown } | null)?.code;
  const connected = !(typeof code === 'string' && notConnectedCodes.has(code));
  return {
    kind: 'Unavailable',
    message: typeof code === 'string' ? `${code}: ${message}` : message,
    retry: connected ? 'idempotent' : 'safe',
    cause: err,
  };
}

/** An answer longer than the client reads; the connection was dropped rather than the body buffered. */
export class ResponseTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`answer longer than ${maxBytes} bytes; not read`);
    this.name = 'ResponseTooLargeError';
  }
}

/** A response body as UTF-8 text, refusing (and hanging up on) one longer than `maxBytes`. */
export async function readBodyText(
  body: AsyncIterable<Uint8Array> & { destroy(): unknown },
  maxBytes: number,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > maxBytes) {
      body.destroy();
      throw new ResponseTooLargeError(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** JSON when it parses, else the text (devices answer some requests with a bare id). */
export function parseJsonOrText(text: string): unknown {
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

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

/** The request's own deadline, combined with the caller's signal. */
export function requestSignal(
  timeoutMs: number,
  caller: AbortSignal | undefined,
): { deadline: AbortSignal; signal: AbortSignal } {
  const deadline = AbortSignal.timeout(timeoutMs);
  return { deadline, signal: caller ? AbortSignal.any([caller, deadline]) : deadline };
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

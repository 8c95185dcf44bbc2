/** Exponential backoff with ±50% jitter, so clients that failed together do not retry together. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** (attempt - 1)) * (0.5 + Math.random());
}

/** Retry-After as milliseconds (delta-seconds or HTTP date), capped; undefined when absent or unparsable. */
export function retryAfterMs(header: string | string[] | undefined, maxMs: number): number | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  if (!v) return undefined;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.min(Math.max(0, s) * 1000, maxMs);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.min(at - Date.now(), maxMs));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Both signals, either one, or none. */
export function anySignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  return a && b ? AbortSignal.any([a, b]) : (a ?? b);
}

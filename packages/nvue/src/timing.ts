/** Exponential backoff with ±50% jitter, so clients that failed together do not retry together. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** (attempt - 1)) * (0.5 + Math.random());
}

/** Retry-After in delta-seconds as milliseconds, capped; undefined when absent or not a number. */
export function retryAfterMs(header: string | string[] | undefined, maxMs: number): number | undefined {
  const v = Number(Array.isArray(header) ? header[0] : header);
  return header !== undefined && Number.isFinite(v) ? Math.min(Math.max(0, v) * 1000, maxMs) : undefined;
}

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

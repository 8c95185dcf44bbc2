/**
 * verify_nvos_ready's bounds (cold reboot, docs/reference/rms-behaviours.md#nvos-hello). RMS asks NVUE 5 times 30 s
 * doubling (at most 450 s); a request may ask up to 10 times, and no wait between two hellos is longer than 15 minutes,
 * so a request's attempts and backoff can neither overflow a timer nor leave a job waiting for days. Pure: the workflow
 * imports it.
 */
export const nvosHelloLimits = { maxAttempts: 10, maxBackoffS: 900 } as const;

/**
 * The waits in seconds between verify_nvos_ready's hellos: `backoffS`·2^n, each capped at `maxBackoffS`, one fewer
 * than the attempts (bounded to 1..maxAttempts, so timings from before these bounds still give a finite plan).
 */
export function nvosHelloWaits(attempts: number, backoffS: number): number[] {
  const n = Math.min(nvosHelloLimits.maxAttempts, Math.max(1, Math.floor(attempts) || 1));
  return Array.from({ length: n - 1 }, (_, i) => Math.min(Math.max(0, backoffS) * 2 ** i, nvosHelloLimits.maxBackoffS));
}

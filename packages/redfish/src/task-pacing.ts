/**
 * When to poll a running task next. Polling at a fixed interval sees a task's end up to a whole interval after it
 * happened; a BMC that reports PercentComplete shows its pace, so once the rest of the task, at the pace seen since the
 * first poll, fits inside one interval, the next poll comes when the task should end instead (never sooner than a
 * quarter interval). Only a poll that saw progress is brought forward: a task stuck at 99 % is polled at the interval,
 * and one that reports no progress always is. The estimate is from PercentComplete, a lower bound of the work done,
 * so it errs late: the early poll lands at or after the end of a task that keeps its pace.
 */
export class TaskPollPacer {
  private first: { atMs: number; percent: number } | undefined;
  private last: number | undefined;

  constructor(private readonly intervalMs: number) {}

  /** The delay before the next poll, given what this poll (at `atMs`) read. */
  next(atMs: number, percent: number | undefined): number {
    const advanced = percent !== undefined && this.last !== undefined && percent > this.last;
    if (percent === undefined || !Number.isFinite(percent) || percent < 0 || percent >= 100) return this.intervalMs;
    // A task whose progress went back (the BMC restarted it) is timed afresh.
    if (!this.first || percent < this.first.percent) {
      this.first = { atMs, percent };
      this.last = percent;
      return this.intervalMs;
    }
    this.last = percent;
    const gained = percent - this.first.percent;
    const tookMs = atMs - this.first.atMs;
    if (!advanced || gained <= 0 || tookMs <= 0) return this.intervalMs;
    const restMs = ((100 - percent) * tookMs) / gained;
    return Math.round(Math.min(this.intervalMs, Math.max(this.intervalMs / 4, restMs)));
  }
}

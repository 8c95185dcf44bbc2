/**
 * When to poll a running task next. Polling at a fixed interval sees a task's end up to a whole interval after it
 * happened; a BMC that reports PercentComplete shows its pace, so once the rest of the task, at the pace seen since the
 * first poll, fits inside one interval, the next poll comes when the task should end instead (never sooner than a
 * quarter interval). Only a poll that saw progress is brought forward, so a task stuck at 99 % or one that reports no
 * progress is polled at the interval. PercentComplete is rounded down, so an early poll may still find the task
 * running: the poll after it comes when the fixed interval would have polled, so the end is never seen later than
 * polling at the interval would see it.
 */
export class TaskPollPacer {
  private first: { atMs: number; percent: number } | undefined;
  private last: number | undefined;
  /** When polling at the interval would poll next; set afresh by every poll that was not brought forward. */
  private fixedAtMs: number | undefined;
  private early = false;

  constructor(private readonly intervalMs: number) {}

  /** The delay before the next poll, given what this poll (at `atMs`) read. */
  next(atMs: number, percent: number | undefined): number {
    if (!this.early || this.fixedAtMs === undefined) this.fixedAtMs = atMs + this.intervalMs;
    const fixedMs = Math.max(0, this.fixedAtMs - atMs);
    const earlyMs = this.restMs(atMs, percent);
    this.early = earlyMs !== undefined && earlyMs < fixedMs;
    return Math.round(this.early ? earlyMs! : fixedMs);
  }

  /** The rest of the task at its pace, after a poll that saw progress; no sooner than a quarter interval. */
  private restMs(atMs: number, percent: number | undefined): number | undefined {
    if (percent === undefined || !Number.isFinite(percent) || percent < 0 || percent >= 100) return undefined;
    // A task whose progress went back (the BMC restarted it) is timed afresh from this reading.
    if (!this.first || this.last === undefined || percent < this.last) {
      this.first = { atMs, percent };
      this.last = percent;
      return undefined;
    }
    const advanced = percent > this.last;
    this.last = percent;
    const gained = percent - this.first.percent;
    const tookMs = atMs - this.first.atMs;
    if (!advanced || gained <= 0 || tookMs <= 0) return undefined;
    return Math.max(this.intervalMs / 4, ((100 - percent) * tookMs) / gained);
  }
}

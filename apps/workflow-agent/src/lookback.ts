/** Per quick cycle, the lookback shrinks by this factor towards what the cycles see (halves in about 35 cycles). */
const decay = 0.98;
/** Margin over the latest delay seen: visibility's delay varies from one close to the next. */
const margin = 1.5;

/**
 * How far a quick cycle looks back past the last one's start. Temporal's visibility store shows a close some time
 * after it happened (it is written asynchronously: well under a second on an idle cluster, tens of seconds on a
 * saturated one, docs/scale.md). A close that shows up after the quick cycles' window has moved past its CloseTime is
 * never listed by a quick cycle and waits for the sweep. So the lookback follows what is seen: an end a quick cycle
 * writes whose close came before the previous cycle started was not shown to that cycle, so visibility took at least
 * that long; and an end the sweep had to write, closed before the quick window, doubles it.
 */
export class Lookback {
  private ms: number;
  /** Where the last quick cycle's window began (epoch ms): closes before it are left to the sweep. */
  private windowStart = -Infinity;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {
    this.ms = minMs;
  }

  get currentMs(): number {
    return this.ms;
  }

  /** The window of a quick cycle after one that started at `lastStart`. */
  since(lastStart: number): Date {
    this.windowStart = lastStart - this.ms;
    return new Date(this.windowStart);
  }

  /**
   * A quick cycle ended; `previousStart` is when the cycle before it started, `oldestEnd` the earliest close among the
   * ends it wrote (epoch ms).
   */
  quickCycle(previousStart: number, oldestEnd: number | undefined): void {
    const shownLate = oldestEnd === undefined ? 0 : previousStart - oldestEnd;
    this.set(Math.max(this.ms * decay, margin * shownLate));
  }

  /** The sweep wrote ends with these closes (epoch ms); how many the quick cycles' window had already passed. */
  sweepWrote(closes: number[]): number {
    const missed = closes.filter((at) => at < this.windowStart).length;
    if (missed > 0) this.set(this.ms * 2);
    return missed;
  }

  private set(ms: number): void {
    this.ms = Math.min(this.maxMs, Math.max(this.minMs, Math.round(ms)));
  }
}

/** Per quick cycle, the lookback shrinks by this factor towards what the cycles see (halves in about 35 cycles). */
const decay = 0.98;
/** Margin over the latest delay seen: visibility's delay varies from one close to the next. */
const margin = 1.5;

/** A quick cycle that succeeded: when it started, and where its window began (epoch ms). */
export interface QuickWindow {
  start: number;
  from: number;
}

/**
 * How far a quick cycle looks back past the last one's start. Temporal's visibility store shows a close some time
 * after it happened (it is written asynchronously: well under a second on an idle cluster, tens of seconds on a
 * saturated one, docs/scale.md). A close that shows up after the quick cycles' window has moved past its CloseTime is
 * never listed by a quick cycle and waits for the sweep. So the lookback follows what is seen:
 * - an end a quick cycle writes that closed inside the previous cycle's window, before that cycle started, was not
 *   shown to it: visibility took at least that long, and the lookback becomes 1.5 times the longest such delay if that
 *   is more than 98% of what it was;
 * - a sweep that wrote ends no quick cycle had listed, closed before the quick window as it was when the sweep listed
 *   them, doubles it (once a sweep).
 */
export class Lookback {
  private ms: number;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {
    this.ms = minMs;
  }

  get currentMs(): number {
    return this.ms;
  }

  /** The window of a quick cycle after `last` (the last that succeeded). */
  windowAfter(last: QuickWindow): QuickWindow {
    return { start: Date.now(), from: last.start - this.ms };
  }

  /** A quick cycle after `previous` wrote ends with these closes (epoch ms). */
  quickCycle(previous: QuickWindow, closes: number[]): void {
    let shownLate = 0;
    for (const at of closes)
      if (at >= previous.from && at < previous.start) shownLate = Math.max(shownLate, previous.start - at);
    this.set(Math.max(this.ms * decay, margin * shownLate));
  }

  /**
   * Of ends a sweep step wrote that no quick cycle had listed (`closes`), how many closed before `quickFrom`, where the
   * last quick window began when the step listed them: ends the quick cycles had passed.
   */
  static passed(closes: number[], quickFrom: number): number {
    return closes.filter((at) => at < quickFrom).length;
  }

  /** A sweep ended that wrote `missed` ends the quick cycles had passed. */
  sweepEnded(missed: number): void {
    if (missed > 0) this.set(this.ms * 2);
  }

  private set(ms: number): void {
    this.ms = Math.min(this.maxMs, Math.max(this.minMs, Math.round(ms)));
  }
}

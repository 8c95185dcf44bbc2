/** Per quick cycle, the lookback shrinks by this factor towards what the cycles see (halves in about 35 cycles). */
const decay = 0.98;
/** Margin over the latest close seen: visibility's delay varies from one close to the next. */
const margin = 1.5;

/**
 * How far a quick cycle looks back past the last one's start. Temporal's visibility store shows a close some time
 * after it happened (it is written asynchronously: well under a second on an idle cluster, tens of seconds on a
 * saturated one, docs/scale.md). A close that shows up after the window has moved past its CloseTime is never listed
 * by a quick cycle and waits for the sweep. So the lookback follows what is seen: the quick cycles see how late the
 * closes they list showed up, and a sweep that writes an end the quick cycles missed says the lookback was too short.
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

  /** A quick cycle wrote ends that were up to `ageMs` old when listed (0: none). */
  quickSaw(ageMs: number): void {
    this.set(Math.max(this.ms * decay, margin * ageMs));
  }

  /** A sweep wrote ends the quick cycles had missed, up to `ageMs` old when listed. */
  sweepFound(ageMs: number): void {
    this.set(Math.max(this.ms, margin * ageMs));
  }

  private set(ms: number): void {
    this.ms = Math.min(this.maxMs, Math.max(this.minMs, Math.round(ms)));
  }
}

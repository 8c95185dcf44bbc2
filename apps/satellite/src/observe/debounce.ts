/**
 * Collapses hits per key: the first hit of a key fires it `delayMs` later, and hits in between are absorbed, so a burst
 * of events for one device (a fault and its log entry, a power change) costs one read.
 */
export class Debouncer {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly delayMs: number,
    private readonly fire: (key: string) => void,
  ) {}

  hit(key: string): void {
    if (this.timers.has(key)) return;
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.fire(key);
      }, this.delayMs),
    );
  }

  /** Drops every pending fire. */
  clear(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}

/**
 * What discovery learned of each BMC (its service root, the links followed from it, ActionInfo, the UpdateService's
 * push URI and limits, whether `$expand` works), shared by the clients of one process. A satellite opens a client per
 * activity, and without this every activity walks the same links again: a firmware update's three activities did, 17 of
 * its 40 requests. Only values that resolved are kept, never a request in flight, so one activity's cancellation or
 * timeout stays its own. A BMC's entry goes when a client invalidates it (after a BMC reset, or on a 404 or 503 from a
 * cached link, as a client's own links always did), when it refuses or drops a connection (it may be rebooting: after a
 * firmware update, an AC cycle), after `ttlMs` from its first value (a hard age: what no 404 reveals, a BMC swapped
 * behind the same address, is read again by then), or when `maxBmcs` newer BMCs were used since. A lookup that began
 * before the BMC was forgotten is not kept.
 */
export class DiscoveryCache {
  private readonly entries = new Map<string, { at: number; values: Map<string, unknown> }>();
  /** Per BMC, how many times it was forgotten: a lookup that began before the last forget is not kept. */
  private readonly generations = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly maxBmcs: number;

  constructor(opts: { ttlMs?: number; maxBmcs?: number } = {}) {
    this.ttlMs = opts.ttlMs ?? 600_000;
    this.maxBmcs = opts.maxBmcs ?? 20_000;
  }

  /** The value discovery keeps under `key` for `bmc`, or undefined. */
  get(bmc: string, key: string): unknown {
    return this.entry(bmc)?.values.get(key);
  }

  has(bmc: string, key: string): boolean {
    return this.entry(bmc)?.values.has(key) ?? false;
  }

  /** Taken when a lookup begins, and handed to set() with what it found. */
  generation(bmc: string): number {
    return this.generations.get(bmc) ?? 0;
  }

  /** Keeps `value`, unless the BMC was forgotten since `generation` (the lookup may have seen it before a reset). */
  set(bmc: string, key: string, value: unknown, generation: number): void {
    if (generation !== this.generation(bmc)) return;
    let e = this.entry(bmc);
    if (!e) {
      e = { at: Date.now(), values: new Map() };
      this.entries.set(bmc, e);
      // Map order is insertion order, and a use moves an entry to the end: the first is the least recently used.
      if (this.entries.size > this.maxBmcs) this.entries.delete(this.entries.keys().next().value!);
    }
    e.values.set(key, value);
  }

  forget(bmc: string): void {
    this.entries.delete(bmc);
    const next = this.generation(bmc) + 1;
    this.generations.delete(bmc);
    this.generations.set(bmc, next);
    if (this.generations.size > this.maxBmcs) this.generations.delete(this.generations.keys().next().value!);
  }

  private entry(bmc: string) {
    const e = this.entries.get(bmc);
    if (!e) return undefined;
    this.entries.delete(bmc);
    if (Date.now() - e.at >= this.ttlMs) return undefined;
    this.entries.set(bmc, e);
    return e;
  }
}

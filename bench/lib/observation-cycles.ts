import { promValue } from './prom-text.js';

/** One observation cycle of a satellite, as its metrics tell it. */
export interface CycleSample {
  /** When the bench saw it end (within one poll of the real end), ms since the epoch. */
  seenAt: number;
  /** Time to observe every device once. */
  seconds: number;
  /** Readings it queued for the hub (changed, or confirming a fault). */
  changes: number;
  /** Delivery POSTs to the hub since the previous sample, and the seconds they took. */
  deliveries: number;
  deliveryS: number;
  /** Cycles this sample stands for: more than 1 when several ended between two polls (then the figures are means). */
  merged: number;
  /** The satellite's V8 heap in use, its memory outside the heap (buffers, wasm) and its open descriptors, then. */
  heapMiB: number;
  externalMiB: number;
  openFds: number;
}

/**
 * Per-cycle figures read from a satellite's Prometheus metrics: polled often enough that each cycle ends between two
 * polls, the growth of the cycle histogram's sum is that cycle's exact duration (its buckets alone would only say
 * "between 20 and 30 s"), and the growth of the changes counter is its changes.
 */
export class ObservationCycles {
  readonly samples: CycleSample[] = [];
  private last = { count: 0, sum: 0, changes: 0, deliveries: 0, deliveryS: 0, heapMiB: 0, externalMiB: 0, openFds: 0 };
  private timer: NodeJS.Timeout | undefined;
  private waiters: (() => void)[] = [];
  private lastError: unknown;

  constructor(
    private readonly metricsUrl: string,
    // Each scrape lists the process's descriptors (a socket per BMC): once a second is often enough, as cycles end at
    // least a cycle's length apart.
    private readonly pollMs = 1000,
  ) {}

  async start(): Promise<void> {
    this.last = await this.read();
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves once `count` cycles have been seen since start(). */
  async waitFor(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.samples.length < count) {
      if (Date.now() > deadline)
        throw new Error(
          `${this.samples.length} of ${count} observation cycles seen after ${timeoutMs} ms` +
            (this.lastError ? ` (last metrics error: ${(this.lastError as Error).message})` : ''),
        );
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 1000);
      });
    }
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.poll().finally(() => this.timer && this.schedule()), this.pollMs);
  }

  private async poll(): Promise<void> {
    let now;
    try {
      now = await this.read();
    } catch (err) {
      this.lastError = err;
      return;
    }
    const merged = now.count - this.last.count;
    if (merged > 0) {
      this.samples.push({
        seenAt: Date.now(),
        seconds: (now.sum - this.last.sum) / merged,
        changes: (now.changes - this.last.changes) / merged,
        deliveries: now.deliveries - this.last.deliveries,
        deliveryS: now.deliveryS - this.last.deliveryS,
        merged,
        heapMiB: now.heapMiB,
        externalMiB: now.externalMiB,
        openFds: now.openFds,
      });
      this.last = now;
      for (const w of this.waiters.splice(0)) w();
    }
  }

  private async read() {
    const text = await (await fetch(this.metricsUrl)).text();
    return {
      count: promValue(text, 'fleet_satellite_observation_cycle_seconds_count'),
      sum: promValue(text, 'fleet_satellite_observation_cycle_seconds_sum'),
      changes: promValue(text, 'fleet_satellite_observation_changes_total'),
      deliveries: promValue(text, 'fleet_satellite_observation_delivery_seconds_count'),
      deliveryS: promValue(text, 'fleet_satellite_observation_delivery_seconds_sum'),
      heapMiB: promValue(text, 'fleet_satellite_nodejs_heap_size_used_bytes') / 2 ** 20,
      externalMiB: promValue(text, 'fleet_satellite_nodejs_external_memory_bytes') / 2 ** 20,
      openFds: promValue(text, 'fleet_satellite_process_open_fds'),
    };
  }
}

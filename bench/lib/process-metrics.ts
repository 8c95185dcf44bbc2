import type { ManagedProcess } from '../../tools/lib/processes.js';
import { peakRssMiB } from './proc-memory.js';
import { promValue } from './prom-text.js';

/**
 * A Fleet process's own figures over a window: peak RSS (the kernel's high-water mark) and the p99 of its event-loop
 * delay from its Prometheus metrics (prom-client's defaults, prefixed with the process's name). prom-client resets
 * its event-loop histogram at each scrape, so `start()` scrapes once and the p99 at `stop()` covers the window.
 */
export class ProcessWindow {
  private readonly url: string;

  constructor(
    readonly proc: ManagedProcess,
    private readonly prefix: string,
  ) {
    const port = /"metricsPort":(\d+)/.exec(proc.output)?.[1];
    if (!port) throw new Error(`${proc.name} logged no metricsPort`);
    this.url = `http://127.0.0.1:${port}/metrics`;
  }

  private async scrape(): Promise<string> {
    const res = await fetch(this.url);
    if (!res.ok) throw new Error(`${this.url}: ${res.status}`);
    return res.text();
  }

  async start(): Promise<void> {
    await this.scrape();
  }

  async stop(): Promise<{ peakRssMiB: number; eventLoopLagP99Ms: number }> {
    const text = await this.scrape();
    const p99 = promValue(text, `${this.prefix}_nodejs_eventloop_lag_p99_seconds`);
    return { peakRssMiB: peakRssMiB(this.proc.pid!), eventLoopLagP99Ms: Number((p99 * 1000).toFixed(1)) };
  }
}

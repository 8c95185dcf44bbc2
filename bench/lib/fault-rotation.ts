/**
 * Faults that move through a simulated site, so an observer has changes to deliver: each rotate() takes a GPU off the
 * bus on the next `perStep` BMCs (in the simulator's admin API) and clears the faults of the previous ones, so every
 * step turns `perStep` healthy devices faulty and `perStep` faulty ones healthy again.
 */
export class FaultRotation {
  private next = 0;
  private faulty: string[] = [];

  constructor(
    private readonly adminUrl: string,
    private readonly bmcIds: readonly string[],
    private readonly perStep: number,
  ) {}

  async rotate(): Promise<void> {
    const cleared = this.faulty;
    this.faulty = Array.from({ length: this.perStep }, (_, i) => this.bmcIds[(this.next + i) % this.bmcIds.length]!);
    this.next = (this.next + this.perStep) % this.bmcIds.length;
    await inBatches(cleared, (id) => this.call('DELETE', id));
    await inBatches(this.faulty, (id) => this.call('POST', id, { part: 'gpu', gpu: 0, offBus: true }));
  }

  private async call(method: 'POST' | 'DELETE', bmcId: string, body?: unknown): Promise<void> {
    const res = await fetch(`${this.adminUrl}/bmcs/${encodeURIComponent(bmcId)}/health/faults`, {
      method,
      ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${bmcId} health/faults: HTTP ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }
}

/** A few admin calls at a time: the simulator is also serving the observer. */
async function inBatches(ids: readonly string[], fn: (id: string) => Promise<void>): Promise<void> {
  for (let i = 0; i < ids.length; i += 16) await Promise.all(ids.slice(i, i + 16).map(fn));
}

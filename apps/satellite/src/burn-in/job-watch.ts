import type { SlurmClient, SlurmJob } from '@fleet/slurm';
import { untilAborted } from '../until-aborted.js';

/**
 * One listing of SLURM's jobs shared by every burn-in this satellite runs: a run asks for a listing no older than it
 * needs, and gets the one in flight or just made when that is young enough. Ten racks' burn-ins polling every half
 * second are then two `GET /jobs` a second, where asking for each job was seven hundred (each an RPC slurmctld
 * answers under its job lock, which slows the very scheduling the tests wait for).
 */
export class JobWatch {
  private current: { startedAt: number; listing: Promise<SlurmJob[]> } | undefined;

  constructor(private readonly slurm: SlurmClient) {}

  /** The jobs slurmctld holds, as seen by a listing that started at `notBefore` (epoch ms) or later. */
  async list(notBefore: number, signal: AbortSignal): Promise<SlurmJob[]> {
    signal.throwIfAborted();
    const current = this.current;
    const listing = current && current.startedAt >= notBefore ? current.listing : this.start();
    return untilAborted(listing, signal);
  }

  private start(): Promise<SlurmJob[]> {
    const startedAt = Date.now();
    // Not cancelled with any one run: others may wait on it. The client's request timeout bounds it.
    const listing = this.slurm.listJobs();
    this.current = { startedAt, listing };
    listing.catch(() => {
      if (this.current?.listing === listing) this.current = undefined;
    });
    return listing;
  }
}

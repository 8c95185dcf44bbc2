import type { FastifyBaseLogger } from 'fastify';
import { reapFinishedJobs, reapIdempotencyKeys, type Db } from '@fleet/db';
import type { RetentionConfig } from '../config.js';
import { PeriodicTask } from './periodic.js';

/** Batches per kind in one run: a backlog is worked off over several runs rather than in one long burst. */
const MAX_BATCHES_PER_RUN = 100;

/**
 * Deletes old finished jobs and idempotency keys (docs/security.md, "Retention") every `everyS`, in batches of one
 * transaction each. Every hub process runs one; an advisory lock lets one reap at a time (the others skip the run).
 * The audit log is never reaped.
 */
export class RetentionReaper {
  private readonly task: PeriodicTask;

  constructor(
    private readonly db: Db,
    private readonly config: RetentionConfig,
    private readonly log: FastifyBaseLogger,
  ) {
    this.task = new PeriodicTask('retention reaper', config.everyS * 1000, () => this.run(), log);
  }

  start(): void {
    this.task.start();
  }

  /** One run: batches until nothing old is left, the cap is hit, or another process holds the lock. */
  async run(): Promise<{ jobs: number; idempotencyKeys: number }> {
    const { jobsDays, idempotencyKeysDays, batch } = this.config;
    const drain = async (reap: () => Promise<number | null>) => {
      let total = 0;
      for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
        const n = await reap();
        if (n === null || n === 0) break;
        total += n;
      }
      return total;
    };
    const jobs = await drain(() => reapFinishedJobs(this.db, jobsDays, batch));
    const idempotencyKeys = await drain(() => reapIdempotencyKeys(this.db, idempotencyKeysDays, batch));
    if (jobs || idempotencyKeys) this.log.info({ jobs, idempotencyKeys }, 'retention reaper: deleted old rows');
    return { jobs, idempotencyKeys };
  }

  close(): Promise<void> {
    return this.task.close();
  }
}

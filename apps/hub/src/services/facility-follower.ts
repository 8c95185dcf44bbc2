import type { FastifyBaseLogger } from 'fastify';
import { facilityEventsPoweringOff, type Db } from '@fleet/db';
import type { RemediationConfig } from '../config.js';
import { followPowerOff } from './facility.service.js';
import { PeriodicTask } from './periodic.js';

/** How often the hub looks for facility events whose power-off ended: one indexed query when none runs. */
export const FACILITY_FOLLOW_EVERY_MS = 2_000;
/** Events taken on per look; more wait for the next. */
const BATCH = 100;

/**
 * Moves facility events on once their rack power-off jobs end (docs/day2.md, "Facility events"): the outcome, a
 * critical event's holds, the final state. Every hub process runs one; the event's row lock makes each move once.
 */
export class FacilityFollower {
  private readonly task: PeriodicTask;

  constructor(
    private readonly db: Db,
    private readonly config: RemediationConfig,
    private readonly log: FastifyBaseLogger,
    everyMs = FACILITY_FOLLOW_EVERY_MS,
  ) {
    this.task = new PeriodicTask('facility follower', everyMs, () => this.tick(), log);
  }

  start(): void {
    this.task.start();
  }

  /** One look: each event whose power-off jobs all ended moves on. Answers how many moved. */
  async tick(): Promise<number> {
    let moved = 0;
    for (const id of await facilityEventsPoweringOff(this.db, BATCH)) {
      const e = await followPowerOff(this.db, this.config, id);
      if (!e) continue;
      moved++;
      this.log.info({ facilityEventId: id, state: e.state }, 'facility event: power-off ended');
    }
    return moved;
  }

  /** Stops looking and waits for a look under way. */
  close(): Promise<void> {
    return this.task.close();
  }
}

import { and, desc, eq, gte, sql } from 'drizzle-orm';
import type { FleetLifecycleState } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { deviceTransitions, jobs } from '../schema/index.js';

/** Where the device was when it was last quarantined (the from-state of its last move into `quarantined`). */
export async function stateBeforeQuarantine(db: DbOrTx, deviceId: string): Promise<FleetLifecycleState | undefined> {
  const [row] = await db
    .select({ from: deviceTransitions.fromState })
    .from(deviceTransitions)
    .where(
      and(
        eq(deviceTransitions.deviceId, deviceId),
        eq(deviceTransitions.axis, 'lifecycle'),
        eq(deviceTransitions.toState, 'quarantined'),
        sql`${deviceTransitions.conditionType} is null`,
        sql`${deviceTransitions.fromState} <> 'remediating'`,
      ),
    )
    .orderBy(desc(deviceTransitions.id))
    .limit(1);
  return (row?.from ?? undefined) as FleetLifecycleState | undefined;
}

/**
 * The devices a site's automatic remediations acted on since `since`: remediation jobs a rule created that did not
 * wait for an operator (the blast radius counts what automation did on its own).
 */
export async function recentAutomaticRemediations(
  db: DbOrTx,
  siteId: string,
  since: Date,
): Promise<{ deviceId: string; rackId: string | null }[]> {
  const rows = await db
    .select({ deviceId: jobs.deviceId, rackId: jobs.rackId })
    .from(jobs)
    .where(
      and(
        eq(jobs.kind, 'device.remediate'),
        eq(jobs.siteId, siteId),
        gte(jobs.createdAt, since),
        sql`${jobs.params} ? 'rule' and not ${jobs.params} ? 'await_approval'`,
      ),
    );
  return rows.filter((r) => r.deviceId).map((r) => ({ deviceId: r.deviceId!, rackId: r.rackId }));
}

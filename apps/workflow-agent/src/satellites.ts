import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { finishSiteRemovals, listSites, recordSatellitePollers, type Db, type PollerReading } from '@fleet/db';
import { satelliteState, siteTaskQueue } from '@fleet/domain';
import type { AgentMetrics } from './metrics.js';

// temporal.api.enums.v1: TaskQueueKind NORMAL, TaskQueueType WORKFLOW and ACTIVITY (the client package has no enums).
const TASK_QUEUE_KIND_NORMAL = 1;
const queueTypes = [1, 2] as const;

/** The actor the removals are audited and tokens revoked under. */
export const siteRemovalActor = 'workflow-agent';

export interface SatelliteDeps {
  db: Db;
  client: Client;
  namespace: string;
  log: Logger;
  metrics: AgentMetrics;
}

type Timestamp = { seconds?: { toString(): string } | number | null; nanos?: number | null } | null | undefined;
const msOf = (ts: Timestamp) => (ts ? Number(String(ts.seconds ?? 0)) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6) : 0);

/** One site's satellite as Temporal lists it: distinct pollers over both queue types and the newest poll. */
async function readPollers(deps: SatelliteDeps, siteId: string): Promise<PollerReading> {
  const identities = new Set<string>();
  let newest = 0;
  for (const taskQueueType of queueTypes) {
    deps.metrics.temporalCalls.inc({ op: 'describe_task_queue' });
    const res = await deps.client.workflowService.describeTaskQueue({
      namespace: deps.namespace,
      taskQueue: { name: siteTaskQueue(siteId), kind: TASK_QUEUE_KIND_NORMAL },
      taskQueueType,
    });
    for (const p of res.pollers ?? []) {
      identities.add(p.identity ?? '');
      newest = Math.max(newest, msOf(p.lastAccessTime));
    }
  }
  return { siteId, pollers: identities.size, lastSeenAt: newest ? new Date(newest) : null };
}

/**
 * One liveness check (docs/deployment.md, "Sites"): asks Temporal for the pollers of every listed site's task queue
 * (a call per queue type and site), writes all readings in one statement and sets the per-site gauges. A site Temporal
 * could not be asked about keeps its last reading, which turns `unknown` as it ages.
 */
export async function checkSatellites(deps: SatelliteDeps): Promise<PollerReading[]> {
  const sites = await listSites(deps.db);
  const checkedAt = new Date();
  const settled = await Promise.allSettled(sites.map((s) => readPollers(deps, s.id)));
  const readings: PollerReading[] = [];
  settled.forEach((r, i) => {
    if (r.status === 'fulfilled') readings.push(r.value);
    else deps.log.warn({ siteId: sites[i]!.id, err: String(r.reason) }, 'cannot read the pollers of a site');
  });
  await recordSatellitePollers(deps.db, readings, checkedAt);
  // Removed sites leave the gauges: a reset, then the listed ones.
  deps.metrics.satellitePollers.reset();
  deps.metrics.satelliteConnected.reset();
  for (const r of readings) {
    deps.metrics.satellitePollers.set({ site_id: r.siteId }, r.pollers);
    const state = satelliteState({ lastSeenAt: r.lastSeenAt, checkedAt }, checkedAt);
    deps.metrics.satelliteConnected.set({ site_id: r.siteId }, state === 'connected' ? 1 : 0);
  }
  return readings;
}

/** Removes the draining sites whose jobs have all finished (docs/deployment.md, "Sites"). */
export async function removeDrainedSites(deps: Pick<SatelliteDeps, 'db' | 'log'>): Promise<void> {
  for (const r of await finishSiteRemovals(deps.db, siteRemovalActor))
    deps.log.info({ siteId: r.siteId, revokedTokens: r.revokedTokenIds.length }, 'site drained and removed');
}

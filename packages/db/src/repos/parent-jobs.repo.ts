import { and, eq, inArray, sql } from 'drizzle-orm';
import { aggregateChildren, type DeviceOutcome, type JobState } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { translatingViolations } from '../errors.js';
import { intents, jobs, type Job, type NewJob } from '../schema/index.js';

const OPEN = `('queued', 'running', 'cancelling')`;

export interface ChildSpec {
  deviceId: string;
  siteId: string;
  params: Record<string, unknown>;
}

/**
 * A parent job and one child per device, in the caller's transaction. A child whose
 * device already has an active job is refused (the partial unique index decides, so
 * two concurrent requests cannot both take a device). With `childIntents` each child
 * is a workflow of its own (batches); without, the parent's workflow drives them. A parent the rack guard or its
 * Idempotency-Key refuses is a UniqueViolation (jobs_one_active_rack_sequence, jobs_created_by_idempotency_key_unique).
 */
export async function insertParentWithChildren(
  tx: DbOrTx,
  parent: NewJob,
  children: ChildSpec[],
  opts: { childKind: string; childIntents: boolean; parentIntent: boolean },
): Promise<{ parent: Job; admitted: Job[]; refused: string[] }> {
  const [row] = await translatingViolations(tx.insert(jobs).values(parent).returning());
  const p = row!;
  if (opts.parentIntent) await tx.insert(intents).values({ jobId: p.id, kind: 'start' });
  if (children.length === 0) return { parent: p, admitted: [], refused: [] };
  const inserted = await tx.execute<{ id: string }>(sql`
    insert into jobs (kind, state, site_id, device_id, rack_id, parent_id, params, created_by)
    select ${opts.childKind}, 'queued', c."siteId", c."deviceId", ${p.rackId}, ${p.id}, c."params", ${p.createdBy}
    from jsonb_to_recordset(${JSON.stringify(children)}::jsonb) as c("deviceId" uuid, "siteId" text, "params" jsonb)
    on conflict (device_id) where device_id is not null and state in ('queued', 'running', 'cancelling') do nothing
    returning id`);
  const ids = inserted.rows.map((r) => r.id);
  const admitted = ids.length ? await tx.select().from(jobs).where(inArray(jobs.id, ids)) : [];
  if (opts.childIntents && ids.length) await tx.insert(intents).values(ids.map((jobId) => ({ jobId, kind: 'start' })));
  const taken = new Set(admitted.map((j) => j.deviceId));
  return { parent: p, admitted, refused: children.filter((c) => !taken.has(c.deviceId)).map((c) => c.deviceId) };
}

export async function childrenOf(db: DbOrTx, parentId: string): Promise<Job[]> {
  return db.select().from(jobs).where(eq(jobs.parentId, parentId)).orderBy(jobs.createdAt, jobs.id);
}

/** The kind of each parent, by id: what a child's parent is decides which workflow runs it. */
export async function parentKinds(db: DbOrTx, parentIds: string[]): Promise<Map<string, string>> {
  if (!parentIds.length) return new Map();
  const rows = await db
    .select({ id: jobs.id, kind: jobs.kind })
    .from(jobs)
    .where(inArray(jobs.id, [...new Set(parentIds)]));
  return new Map(rows.map((r) => [r.id, r.kind]));
}

/** Child counts by state for each parent, in one query. */
export async function childCounts(
  db: DbOrTx,
  parentIds: string[],
): Promise<Map<string, Partial<Record<JobState, number>>>> {
  const out = new Map<string, Partial<Record<JobState, number>>>();
  if (!parentIds.length) return out;
  const rows = await db
    .select({ parentId: jobs.parentId, state: jobs.state, n: sql<number>`count(*)::int` })
    .from(jobs)
    .where(inArray(jobs.parentId, parentIds))
    .groupBy(jobs.parentId, jobs.state);
  for (const r of rows) {
    const m = out.get(r.parentId!) ?? {};
    m[r.state as JobState] = r.n;
    out.set(r.parentId!, m);
  }
  return out;
}

/** Writes a rack workflow's per-device outcomes onto its child jobs; terminal children stay as they are. */
export async function applyChildOutcomes(
  db: DbOrTx,
  parentId: string,
  outcomes: Record<string, DeviceOutcome>,
): Promise<void> {
  const rows = Object.entries(outcomes).map(([deviceId, o]) => ({
    deviceId,
    state: o.state,
    result: o.powerState
      ? { powerState: o.powerState, ...(o.message ? { message: o.message } : {}) }
      : o.message
        ? { message: o.message }
        : null,
    error: o.error ?? null,
  }));
  if (!rows.length) return;
  await db.execute(sql`
    update jobs j set state = o.state, result = coalesce(o.result, j.result), error = coalesce(o.error, j.error),
      started_at = coalesce(j.started_at, case when o.state <> 'queued' then now() end),
      finished_at = case when o.state in ('succeeded', 'failed', 'cancelled') then coalesce(j.finished_at, now())
        else j.finished_at end,
      updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as o("deviceId" uuid, state text, result jsonb, error jsonb)
    where j.parent_id = ${parentId} and j.device_id = o."deviceId" and j.state in ${sql.raw(OPEN)}
      and j.state is distinct from o.state`);
}

/** A parent's children not yet ended, by id. */
export async function openChildrenOf(db: DbOrTx, parentId: string): Promise<Job[]> {
  return db
    .select()
    .from(jobs)
    .where(and(eq(jobs.parentId, parentId), sql`${jobs.state} in ${sql.raw(OPEN)}`))
    .orderBy(jobs.id);
}

/** Children left open when their parent ended were never reached: close them so devices are free. */
export async function closeOpenChildren(db: DbOrTx, parentIds: string[], message: string): Promise<void> {
  await closeChildrenIn(db, parentIds, message, OPEN);
}

/**
 * A campaign that ended never started its devices still queued: close those. A device a listing saw running has a
 * workflow of its own, which may outlive the campaign (a terminated campaign's devices are asked to stop only once it
 * has ended): its job stays open, keeping the device busy, until that workflow's own end is written.
 */
export async function closeQueuedChildren(db: DbOrTx, parentIds: string[], message: string): Promise<void> {
  await closeChildrenIn(db, parentIds, message, `('queued')`);
}

async function closeChildrenIn(db: DbOrTx, parentIds: string[], message: string, states: string): Promise<void> {
  if (!parentIds.length) return;
  await db.execute(sql`
    update jobs set state = 'cancelled', finished_at = now(), updated_at = now(),
      error = ${JSON.stringify({ code: 'NOT_REACHED', message })}::jsonb
    where parent_id = any(${`{${parentIds.join(',')}}`}::uuid[]) and state in ${sql.raw(states)}`);
}

/** Batch parents (no workflow of their own) follow their children, by the RMS rules. */
export async function aggregateBatchParents(db: DbOrTx): Promise<number> {
  const open = await db
    .select({ id: jobs.id, state: jobs.state })
    .from(jobs)
    .where(and(eq(jobs.kind, 'batch.power'), inArray(jobs.state, ['queued', 'running', 'cancelling'])));
  if (!open.length) return 0;
  const counts = await childCounts(
    db,
    open.map((p) => p.id),
  );
  let changed = 0;
  for (const p of open) {
    const c = counts.get(p.id) ?? {};
    const agg = aggregateChildren(c);
    const state = agg.state === 'running' && p.state === 'cancelling' ? 'cancelling' : agg.state;
    const terminal = state !== 'running' && state !== 'cancelling';
    const res = await db
      .update(jobs)
      .set({
        state,
        progress: { stage: terminal ? 'done' : 'devices', message: agg.message },
        ...(terminal
          ? {
              finishedAt: new Date(),
              ...(state === 'failed' ? { error: { code: 'BATCH_FAILED', message: agg.message } } : {}),
            }
          : {}),
        startedAt: sql`coalesce(${jobs.startedAt}, now())`,
        updatedAt: new Date(),
      })
      .where(
        and(
          eq(jobs.id, p.id),
          inArray(jobs.state, ['queued', 'running', 'cancelling']),
          sql`(${jobs.state} <> ${state} or ${jobs.progress}->>'message' is distinct from ${agg.message})`,
        ),
      );
    changed += res.rowCount ?? 0;
  }
  return changed;
}

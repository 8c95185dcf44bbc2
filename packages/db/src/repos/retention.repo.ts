import { sql } from 'drizzle-orm';
import { terminalJobStates } from '@fleet/domain';
import type { Db, Tx } from '../client.js';
import { sqlList } from '../schema/_columns.js';

const terminal = sqlList(terminalJobStates);

/**
 * Takes the reaper's lock for the transaction, or answers false at once when another hub process holds it: one
 * process reaps at a time, and a batch never waits behind another.
 */
async function tryReaperLock(tx: Tx): Promise<boolean> {
  const res = await tx.execute<{ got: boolean }>(
    sql`select pg_try_advisory_xact_lock(hashtextextended('fleet_retention_reaper', 0)) as got`,
  );
  return res.rows[0]?.got === true;
}

/**
 * Deletes up to `batch` finished top-level jobs older than `days` (by when they finished) with all their descendants,
 * their intents and their campaign rows, in one transaction (docs/security.md, "Retention"). A job is kept while any
 * descendant still runs or a facility event powering off waits for it. Foreign keys: intents and campaigns refer to
 * jobs without a cascade (deleted first here); sla_job_stages cascades; approvals' job_id is set null; the audit log,
 * device history and RMA cases name jobs without a key and keep their rows. Answers the jobs deleted, or null when
 * another process holds the reaper's lock.
 */
export async function reapFinishedJobs(db: Db, days: number, batch: number): Promise<number | null> {
  return db.transaction(async (tx) => {
    if (!(await tryReaperLock(tx))) return null;
    // The limit applies to jobs that can go: a job whose family still runs never holds back older ones.
    const picked = await tx.execute<{ id: string }>(sql`
      with recursive top as (
        select j.id from jobs j
        where j.parent_id is null and j.state in ${terminal}
          and coalesce(j.finished_at, j.updated_at) < now() - make_interval(days => ${days})
          and not exists (select 1 from facility_events f where f.state = 'powering_off' and j.id = any(f.job_ids))
          and not exists (
            with recursive d(id, state) as (
              select c.id, c.state from jobs c where c.parent_id = j.id
              union all
              select c.id, c.state from jobs c join d on c.parent_id = d.id
            )
            select 1 from d where d.state not in ${terminal})
        order by coalesce(j.finished_at, j.updated_at)
        limit ${batch}
      ), family(id) as (
        select id from top
        union all
        select c.id from jobs c join family f on c.parent_id = f.id
      )
      select id from family`);
    const ids = picked.rows.map((r) => r.id);
    if (ids.length === 0) return 0;
    const list = sql.join(
      ids.map((id) => sql`${id}::uuid`),
      sql`, `,
    );
    await tx.execute(sql`delete from intents where job_id in (${list})`);
    await tx.execute(sql`delete from campaigns where id in (${list})`);
    const res = await tx.execute(sql`delete from jobs where id in (${list}) and state in ${terminal}`);
    return res.rowCount ?? 0;
  });
}

/** Deletes up to `batch` idempotency-key answers older than `days`; null when another process holds the lock. */
export async function reapIdempotencyKeys(db: Db, days: number, batch: number): Promise<number | null> {
  return db.transaction(async (tx) => {
    if (!(await tryReaperLock(tx))) return null;
    const res = await tx.execute(sql`
      delete from idempotency_keys where ctid in (
        select ctid from idempotency_keys where created_at < now() - make_interval(days => ${days}) limit ${batch})`);
    return res.rowCount ?? 0;
  });
}

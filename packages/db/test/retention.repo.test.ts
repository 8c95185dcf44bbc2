import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import {
  campaigns,
  connectDb,
  idempotencyKeys,
  insertAudit,
  insertSite,
  intents,
  jobs,
  reapFinishedJobs,
  reapIdempotencyKeys,
  slaJobStages,
  type DbHandle,
} from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

const DAY = 86_400_000;
const daysAgo = (d: number) => new Date(Date.now() - d * DAY);

// The retention reaper's deletes (docs/security.md, "Retention"): old finished jobs with their family, intents and
// campaign rows; never a job that runs, one whose family runs, or one a facility event powering off waits for.
describe('retention reaper (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 4);
    await insertSite(handle.db, { id: 'ret', name: 'Retention' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const job = async (
    name: string,
    o: { state?: string; finished?: Date | null; parentId?: string; kind?: string } = {},
  ): Promise<string> => {
    const [row] = await handle.db
      .insert(jobs)
      .values({
        kind: o.kind ?? 'device.power',
        state: o.state ?? 'succeeded',
        siteId: 'ret',
        parentId: o.parentId ?? null,
        params: { name },
        createdBy: 'tester',
        finishedAt: o.finished === undefined ? daysAgo(100) : o.finished,
      })
      .returning();
    await handle.db.insert(intents).values({ jobId: row!.id, kind: 'start', status: 'dispatched' });
    return row!.id;
  };
  const exists = async (id: string) =>
    (
      await handle.db
        .select({ id: jobs.id })
        .from(jobs)
        .where(sql`${jobs.id} = ${id}`)
    ).length === 1;

  it('deletes old finished jobs with their children, intents, campaign and stage rows; keeps the rest', async () => {
    // Oldest first: a job whose family still runs must not hold back the batch.
    const busyParent = await job('finished parent, running child', { kind: 'batch.power', finished: daysAgo(200) });
    const busyChild = await job('running child', { parentId: busyParent, state: 'running', finished: null });
    const old = await job('old');
    await handle.db.insert(slaJobStages).values({ jobId: old, stage: 'done', since: daysAgo(100) });
    const batch = await job('old batch', { kind: 'batch.power' });
    const child = await job('old child', { parentId: batch });
    const campaign = await job('old campaign', { kind: 'firmware.campaign' });
    await handle.db.insert(campaigns).values({
      id: campaign,
      name: 'c',
      siteId: 'ret',
      policy: {} as never,
      plan: {} as never,
      createdBy: 'tester',
    });
    const campaignChild = await job('campaign child', { parentId: campaign, kind: 'firmware.update' });
    const recent = await job('recent', { finished: daysAgo(10) });
    const running = await job('running old', { state: 'running', finished: null });
    const awaited = await job('awaited by a facility event');
    await handle.db.execute(sql`
      insert into facility_events (source, external_id, kind, severity, rack_ids, message, grading, state, job_ids)
      values ('bms', 'e1', 'leak', 'critical', '{}', 'leak', '{}', 'powering_off', array[${awaited}::uuid])`);
    await insertAudit(handle.db, {
      actor: 'tester',
      action: 'device.power',
      requestId: 'r',
      outcome: 'accepted',
      statusCode: 202,
      jobId: old,
    });

    assert.equal(await reapFinishedJobs(handle.db, 90, 2), 3, 'two top-level jobs a batch, with their children');
    let total = 3;
    for (let n = await reapFinishedJobs(handle.db, 90, 2); n; n = await reapFinishedJobs(handle.db, 90, 2)) total += n;
    assert.equal(total, 5);
    for (const id of [old, batch, child, campaign, campaignChild]) assert.equal(await exists(id), false, id);
    for (const id of [recent, running, busyParent, busyChild, awaited]) assert.equal(await exists(id), true, id);
    const left = await handle.db.select({ jobId: intents.jobId }).from(intents);
    assert.equal(left.length, 5, 'the kept jobs keep their intents');
    assert.equal((await handle.db.select().from(campaigns)).length, 0);
    assert.equal((await handle.db.select().from(slaJobStages)).length, 0);
    const audit = await handle.pool.query('select job_id from audit_log where job_id = $1', [old]);
    assert.equal(audit.rowCount, 1, 'the audit log is kept');
  });

  it('deletes idempotency keys past their age in batches, and runs in one process at a time', async () => {
    const answer = { action: 'POST /v1/sites', requestFingerprint: 'f', statusCode: 201, headers: {}, response: {} };
    await handle.db.insert(idempotencyKeys).values([
      { actor: 'a', key: 'old-1', ...answer, createdAt: daysAgo(3) },
      { actor: 'a', key: 'old-2', ...answer, createdAt: daysAgo(3) },
      { actor: 'a', key: 'old-3', ...answer, createdAt: daysAgo(3) },
      { actor: 'a', key: 'fresh', ...answer, createdAt: daysAgo(1) },
    ]);
    const other = await handle.pool.connect();
    try {
      await other.query('begin');
      await other.query("select pg_advisory_xact_lock(hashtextextended('fleet_retention_reaper', 0))");
      assert.equal(await reapIdempotencyKeys(handle.db, 2, 100), null, 'another process holds the lock');
      assert.equal(await reapFinishedJobs(handle.db, 90, 100), null);
      await other.query('commit');
    } finally {
      other.release();
    }
    assert.equal(await reapIdempotencyKeys(handle.db, 2, 2), 2);
    assert.equal(await reapIdempotencyKeys(handle.db, 2, 2), 1);
    assert.equal(await reapIdempotencyKeys(handle.db, 2, 2), 0);
    const keys = await handle.db.select({ key: idempotencyKeys.key }).from(idempotencyKeys);
    assert.deepEqual(
      keys.map((k) => k.key),
      ['fresh'],
    );
  });
});

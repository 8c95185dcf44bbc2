import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { connectDb, insertSite, intents, jobs, type DbHandle } from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';
const migration = readFileSync(
  new URL('../../../migrations/0027_close_unreachable_device_jobs.sql', import.meta.url),
  'utf8',
);

// The data the code before left behind: device jobs queued under a parent that ended without starting them.
describe('migration 0027: device jobs left queued under an ended parent (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 2);
    await insertSite(handle.db, { id: 'm27', name: 'Migration 27' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const job = async (kind: string, state: string, parentId: string | null = null) => {
    const [row] = await handle.db
      .insert(jobs)
      .values({ kind, state, siteId: 'm27', parentId, params: {}, createdBy: 'tester' })
      .returning();
    return row!.id;
  };
  const states = async (ids: string[]) =>
    (
      await handle.pool.query<{ id: string; state: string; code: string | null }>(
        `select id, state, error->>'code' as code from jobs where id = any($1::uuid[])`,
        [ids],
      )
    ).rows.reduce<Record<string, string>>((m, r) => ({ ...m, [r.id]: `${r.state}/${r.code}` }), {});

  it(`closes them as not reached; the children of open or started parents, and a child with a start of its own, \
stay`, async () => {
    const cancelled = await job('firmware.campaign', 'cancelled');
    const orphans = [await job('device.firmware_update', 'queued', cancelled)];
    const failed = await job('rack.power', 'failed');
    orphans.push(await job('device.power', 'queued', failed));
    const running = await job('firmware.campaign', 'running');
    const waiting = await job('device.firmware_update', 'queued', running);
    const ownStart = await job('device.power', 'queued', cancelled);
    await handle.db.insert(intents).values({ jobId: ownStart, kind: 'start', status: 'pending' });
    const ended = await job('device.firmware_update', 'succeeded', cancelled);
    // A parent whose start reached Temporal: its children are its workflow's (and the agent's, at its end).
    const started = await job('firmware.campaign', 'failed');
    await handle.db.insert(intents).values({ jobId: started, kind: 'start', status: 'dispatched' });
    const ofStarted = await job('device.firmware_update', 'queued', started);

    await handle.pool.query(migration);

    const after = await states([...orphans, waiting, ownStart, ended, ofStarted]);
    assert.equal(after[ofStarted], 'queued/null');
    for (const id of orphans) assert.equal(after[id], 'cancelled/NOT_REACHED');
    assert.equal(after[waiting], 'queued/null');
    assert.equal(after[ownStart], 'queued/null');
    assert.equal(after[ended], 'succeeded/null');
  });
});

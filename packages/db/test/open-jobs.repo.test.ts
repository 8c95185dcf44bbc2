import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectDb, insertSite, intents, jobs, listOpenDispatchedJobs, type DbHandle } from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

// What the workflow agent's sweep reads (apps/workflow-agent/src/projector.ts): open jobs whose workflow was started,
// and, in its light sweeps, not the campaign devices still waiting for their campaign to start them.
describe('open dispatched jobs (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  const ids: Record<string, string> = {};

  const job = async (
    name: string,
    o: { kind: string; state: string; parent?: string; intent?: 'dispatched' | 'pending' },
  ): Promise<void> => {
    const [row] = await handle.db
      .insert(jobs)
      .values({
        kind: o.kind,
        state: o.state,
        siteId: 'sweep',
        parentId: o.parent ? ids[o.parent]! : null,
        params: { name },
        createdBy: 'tester',
      })
      .returning();
    ids[name] = row!.id;
    if (o.intent) await handle.db.insert(intents).values({ jobId: row!.id, kind: 'start', status: o.intent });
  };
  const names = (rows: { id: string }[]) =>
    rows.map((r) => Object.keys(ids).find((n) => ids[n] === r.id)).sort((a, b) => a!.localeCompare(b!));

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 4);
    await insertSite(handle.db, { id: 'sweep', name: 'Sweep' });
    await job('campaign', { kind: 'firmware.campaign', state: 'running', intent: 'dispatched' });
    for (let i = 0; i < 5; i++)
      await job(`queued device ${i}`, { kind: 'device.firmware_update', state: 'queued', parent: 'campaign' });
    await job('running device', { kind: 'device.firmware_update', state: 'running', parent: 'campaign' });
    await job('cancelling device', { kind: 'device.firmware_update', state: 'cancelling', parent: 'campaign' });
    await job('done device', { kind: 'device.firmware_update', state: 'succeeded', parent: 'campaign' });
    // A job the agent starts itself: queued until a listing shows its workflow, in every sweep.
    await job('queued power', { kind: 'device.power', state: 'queued', intent: 'dispatched' });
    await job('undispatched power', { kind: 'device.power', state: 'queued', intent: 'pending' });
    await job('other campaign', { kind: 'firmware.campaign', state: 'queued', intent: 'pending' });
    await job('device of an undispatched campaign', {
      kind: 'device.firmware_update',
      state: 'queued',
      parent: 'other campaign',
    });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const everyOpen = ['campaign', 'cancelling device', 'queued power', 'running device'];

  it('a full sweep reads every open job whose workflow was started, the queued campaign devices too', async () => {
    const rows = await listOpenDispatchedJobs(handle.db, 100);
    assert.deepEqual(names(rows), [...everyOpen, ...[0, 1, 2, 3, 4].map((i) => `queued device ${i}`)].sort());
  });

  it('a light sweep leaves out the campaign devices still queued, and pages through the rest by id', async () => {
    assert.deepEqual(names(await listOpenDispatchedJobs(handle.db, 100, undefined, { waiting: false })), everyOpen);
    const seen: { id: string }[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await listOpenDispatchedJobs(handle.db, 1, after, { waiting: false });
      if (page.length === 0) break;
      seen.push(...page);
      after = page[0]!.id;
    }
    assert.deepEqual(names(seen), everyOpen);
  });

  it('a campaign device is in the light sweeps once it is seen running', async () => {
    await handle.pool.query(`update jobs set state = 'running' where id = $1`, [ids['queued device 0']]);
    const rows = await listOpenDispatchedJobs(handle.db, 100, undefined, { waiting: false });
    assert.deepEqual(names(rows), [...everyOpen, 'queued device 0'].sort());
  });
});

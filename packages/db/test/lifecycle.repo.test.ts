import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { AxisWriterRefused, LifecycleTransitionRefused, type FleetLifecycleState } from '@fleet/domain';
import {
  CheckViolation,
  connectDb,
  deviceHistory,
  getLifecycle,
  insertDevice,
  insertSite,
  setLifecycle,
  type DbHandle,
} from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';
const writer = 'lifecycle-workflow';

describe('device lifecycle repository (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let n = 0;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 10);
    await insertSite(handle.db, { id: 'lc-01', name: 'Lifecycle' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const newDevice = async () => (await insertDevice(handle.db, { name: `dev-${++n}`, siteId: 'lc-01' })).id;
  const history = async (deviceId: string) => (await deviceHistory(handle.db, deviceId, { limit: 100 })).items;
  const move = (deviceId: string, to: FleetLifecycleState, jobId: string = randomUUID()) =>
    setLifecycle(handle.db, { deviceId, to, writer, jobId, reason: 'Test' });
  /** Walks a device along legal moves to `path`'s last state. */
  const walk = async (deviceId: string, ...path: FleetLifecycleState[]) => {
    for (const to of path) await move(deviceId, to);
  };
  const refusedFrom = (current: FleetLifecycleState) => (e: unknown) =>
    e instanceof LifecycleTransitionRefused && e.current === current && e.message.startsWith(`device is ${current}:`);

  it('starts every device, and leaves the NetBox status column alone, at discovered', async () => {
    const id = await newDevice();
    assert.equal(await getLifecycle(handle.db, id), 'discovered');
    const { rows } = await handle.pool.query('select lifecycle_state from devices where id = $1', [id]);
    assert.equal(rows[0].lifecycle_state, 'active');
  });

  it('walks the main line and keeps each move as history, newest first', async () => {
    const id = await newDevice();
    const path: FleetLifecycleState[] = ['enrolling', 'enrolled', 'burning_in', 'certified', 'in_service'];
    const jobs = path.map(() => randomUUID());
    for (const [i, to] of path.entries()) {
      const change = await setLifecycle(handle.db, {
        deviceId: id,
        to,
        writer,
        jobId: jobs[i]!,
        reason: 'StepDone',
        message: `step ${i}`,
      });
      assert.equal(change?.changed, true);
      assert.equal(change?.to, to);
    }
    assert.equal(await getLifecycle(handle.db, id), 'in_service');
    const rows = await history(id);
    assert.deepEqual(
      rows.map((r) => [r.axis, r.fromState, r.toState, r.writer, r.jobId, r.reason, r.message, r.conditionType]),
      path
        .map((to, i) => [
          'lifecycle',
          i ? path[i - 1] : 'discovered',
          to,
          writer,
          jobs[i],
          'StepDone',
          `step ${i}`,
          null,
        ])
        .reverse(),
    );
    assert.ok(rows.every((r) => r.at instanceof Date));
  });

  it('refuses a writer that does not own the lifecycle axis, and changes nothing', async () => {
    const id = await newDevice();
    for (const wrong of ['burn-in-workflow', 'satellite', 'netbox-agent', 'hub'])
      await assert.rejects(
        setLifecycle(handle.db, { deviceId: id, to: 'enrolling', writer: wrong, jobId: randomUUID(), reason: 'Test' }),
        (e: unknown) => e instanceof AxisWriterRefused && e.axis === 'lifecycle' && e.writer === wrong,
      );
    assert.equal(await getLifecycle(handle.db, id), 'discovered');
    assert.deepEqual(await history(id), []);
  });

  it('refuses an illegal move naming the current state and the allowed ones, and changes nothing', async () => {
    const id = await newDevice();
    await assert.rejects(move(id, 'in_service'), (e: unknown) => {
      assert.ok(e instanceof LifecycleTransitionRefused);
      assert.equal(e.code, 'CONFLICT');
      assert.equal(e.current, 'discovered');
      assert.equal(e.requested, 'in_service');
      assert.deepEqual(e.allowed, ['enrolling', 'quarantined', 'decommissioned']);
      assert.equal(
        e.message,
        'device is discovered: it cannot move to in_service (it may move to enrolling, quarantined, decommissioned)',
      );
      return true;
    });
    await walk(id, 'quarantined', 'remediating', 'rma', 'discovered', 'decommissioned');
    await assert.rejects(move(id, 'discovered'), refusedFrom('decommissioned'));
    assert.equal(await getLifecycle(handle.db, id), 'decommissioned');
    assert.equal((await history(id)).length, 5);
  });

  it('lets only one of two concurrent moves through: the second waits for the row, then sees the first', async () => {
    const id = await newDevice();
    await walk(id, 'enrolling', 'enrolled', 'burning_in', 'certified');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let firstMoved!: () => void;
    const moved = new Promise<void>((r) => (firstMoved = r));
    // The first move stays uncommitted until released; the second starts meanwhile on another connection.
    const first = handle.db.transaction(async (tx) => {
      await setLifecycle(tx, { deviceId: id, to: 'in_service', writer, jobId: randomUUID(), reason: 'Test' });
      firstMoved();
      await held;
    });
    await moved;
    let secondSettled = false;
    const second = move(id, 'burning_in').finally(() => (secondSettled = true));
    second.catch(() => {});
    await sleep(300);
    assert.equal(secondSettled, false, 'the second move must wait for the first one to commit');
    release();
    await first;
    // certified → burning_in was legal when it was asked, but in_service → burning_in is not.
    await assert.rejects(second, refusedFrom('in_service'));
    assert.equal(await getLifecycle(handle.db, id), 'in_service');
    assert.equal((await history(id)).filter((r) => r.toState === 'burning_in').length, 1);
  });

  it('moves a device once when many jobs ask for the same move at the same time', async () => {
    const id = await newDevice();
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => move(id, 'enrolling')));
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1);
    for (const r of results)
      if (r.status === 'rejected') assert.ok(refusedFrom('enrolling')(r.reason), String(r.reason));
    const rows = await history(id);
    assert.equal(rows.length, 1);
    assert.equal(
      rows[0]!.jobId,
      (won[0] as PromiseFulfilledResult<{ transition: { jobId: string } }>).value.transition.jobId,
    );
  });

  it('answers a retry by the job that made the move with changed: false, and refuses another job', async () => {
    const id = await newDevice();
    const job = randomUUID();
    assert.equal((await move(id, 'enrolling', job))?.changed, true);
    const again = await move(id, 'enrolling', job);
    assert.deepEqual(again, { deviceId: id, from: 'enrolling', to: 'enrolling', changed: false });
    await assert.rejects(move(id, 'enrolling'), refusedFrom('enrolling'));
    assert.equal((await history(id)).length, 1);
  });

  it('answers undefined for a device that does not exist', async () => {
    assert.equal(await move(randomUUID(), 'enrolling'), undefined);
  });

  it('rolls the move back when its history row is refused (a reason that is not CamelCase)', async () => {
    const id = await newDevice();
    await assert.rejects(
      setLifecycle(handle.db, { deviceId: id, to: 'enrolling', writer, jobId: randomUUID(), reason: 'not camel' }),
      (e: unknown) => e instanceof CheckViolation && e.constraint === 'device_transitions_reason_check',
    );
    assert.equal(await getLifecycle(handle.db, id), 'discovered');
  });

  it('has Postgres refuse a lifecycle state or an axis writer the tables do not know', async () => {
    const id = await newDevice();
    await assert.rejects(handle.pool.query(`update devices set fleet_lifecycle = 'active' where id = $1`, [id]), {
      code: '23514',
      constraint: 'devices_fleet_lifecycle_check',
    });
    await assert.rejects(
      handle.pool.query(
        `insert into device_transitions (device_id, axis, to_state, writer, reason)
         values ($1, 'lifecycle', 'enrolling', 'satellite', 'Test')`,
        [id],
      ),
      { code: '23514', constraint: 'device_transitions_axis_writer_check' },
    );
  });

  it('pages a device history with a cursor and filters it by axis', async () => {
    const id = await newDevice();
    await walk(id, 'enrolling', 'enrolled', 'burning_in', 'certified', 'in_service');
    const seen: string[] = [];
    let cursor: number | undefined;
    let pages = 0;
    do {
      const page = await deviceHistory(handle.db, id, { limit: 2, cursor });
      seen.push(...page.items.map((r) => r.toState));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    assert.deepEqual(seen, ['in_service', 'certified', 'burning_in', 'enrolled', 'enrolling']);
    assert.equal(pages, 3);
    assert.equal((await deviceHistory(handle.db, id, { limit: 10, axis: ['health'] })).items.length, 0);
    assert.equal((await deviceHistory(handle.db, id, { limit: 10, axis: ['lifecycle'] })).items.length, 5);
  });
});

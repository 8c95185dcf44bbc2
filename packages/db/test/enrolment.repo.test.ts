import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { HardwareRecord, LifecycleMemo } from '@fleet/domain';
import {
  applyLifecycleReports,
  connectDb,
  deviceHistory,
  getDeviceHardware,
  getLifecycle,
  insertDevice,
  insertSite,
  listConditions,
  setLifecycle,
  type DbHandle,
} from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

const hardware = (serialNumber: string, readAt: string): HardwareRecord => ({
  readAt,
  document: { digest: `sha256:${'ab'.repeat(32)}`, bytes: 1000, resources: 140 },
  serialNumber,
  gpuCount: 4,
  parts: [{ id: 'GPU_0', kind: 'gpu', serialNumber: 'G0' }],
  nics: 2,
  firmwareComponents: 8,
  nvlinkPorts: 72,
  differences: [],
});

describe('applying lifecycle workflow reports (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let n = 0;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 5);
    await insertSite(handle.db, { id: 'en-01', name: 'Enrolment' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const newDevice = async (extra: { serial?: string; netboxId?: number } = {}) =>
    (await insertDevice(handle.db, { name: `dev-${++n}`, siteId: 'en-01', ...extra })).id;
  const apply = (jobId: string, lifecycle: LifecycleMemo, hw: Record<string, HardwareRecord> = {}) =>
    handle.db.transaction((tx) => applyLifecycleReports(tx, [{ jobId, lifecycle, hardware: hw }]));

  it('applies each move once, in order, however often the same report is applied', async () => {
    const id = await newDevice();
    const job = randomUUID();
    const report = (...to: ('enrolling' | 'enrolled' | 'burning_in' | 'certified')[]): LifecycleMemo => ({
      rev: to.length,
      devices: { [id]: { moves: to.map((s) => ({ to: s, reason: 'Step' })), conditions: {} } },
    });
    assert.equal((await apply(job, report('enrolling'))).moves, 1);
    assert.equal((await apply(job, report('enrolling'))).moves, 0, 'applied again: nothing moves');
    // A sweep that missed the middle revisions applies every move it has not applied yet.
    assert.equal((await apply(job, report('enrolling', 'enrolled', 'burning_in', 'certified'))).moves, 3);
    assert.equal(await getLifecycle(handle.db, id), 'certified');
    const moves = (await deviceHistory(handle.db, id, { limit: 10, axis: ['lifecycle'] })).items;
    assert.deepEqual(
      moves.map((m) => [m.toState, m.writer, m.jobId]).reverse(),
      ['enrolling', 'enrolled', 'burning_in', 'certified'].map((s) => [s, 'lifecycle-workflow', job]),
    );
  });

  it('counts a retest from certified as moves of its own job', async () => {
    const id = await newDevice();
    for (const to of ['enrolling', 'enrolled', 'burning_in', 'certified'] as const)
      await setLifecycle(handle.db, {
        deviceId: id,
        to,
        writer: 'lifecycle-workflow',
        jobId: randomUUID(),
        reason: 'X',
      });
    const retest = randomUUID();
    const memo: LifecycleMemo = {
      rev: 2,
      devices: {
        [id]: {
          moves: [
            { to: 'burning_in', reason: 'BurnInStarted' },
            { to: 'certified', reason: 'BurnInPassed' },
          ],
          conditions: {},
        },
      },
    };
    assert.equal((await apply(retest, memo)).moves, 2);
    assert.equal(await getLifecycle(handle.db, id), 'certified');
  });

  it('stops at a move the table refuses and reports it; the moves before it stay', async () => {
    const id = await newDevice();
    const stats = await apply(randomUUID(), {
      rev: 1,
      devices: {
        [id]: {
          moves: [
            { to: 'enrolling', reason: 'EnrolmentStarted' },
            { to: 'certified', reason: 'Skipped' },
            { to: 'in_service', reason: 'Never' },
          ],
          conditions: {},
        },
      },
    });
    assert.equal(stats.moves, 1);
    assert.equal(stats.refused.length, 1);
    assert.match(stats.refused[0]!.message, /device is enrolling: it cannot move to certified/);
    assert.equal(await getLifecycle(handle.db, id), 'enrolling');
  });

  it('writes conditions as their observers, with the job, and a transition only when the status changes', async () => {
    const id = await newDevice();
    const job = randomUUID();
    const memo = (status: 'True' | 'False'): LifecycleMemo => ({
      rev: 1,
      devices: {
        [id]: {
          moves: [],
          conditions: {
            BMCReachable: { status: 'True', reason: 'Answered', message: 'power Off' },
            BurnInPassed: { status, reason: status === 'True' ? 'AllTestsPassed' : 'TestFailed', message: '' },
          },
        },
      },
    });
    assert.equal((await apply(job, memo('False'))).conditions, 2);
    assert.equal((await apply(job, memo('False'))).conditions, 0);
    assert.equal((await apply(job, memo('True'))).conditions, 1);
    const conditions = await listConditions(handle.db, id);
    assert.deepEqual(conditions.map((c) => [c.type, c.status, c.reason]).sort(), [
      ['BMCReachable', 'True', 'Answered'],
      ['BurnInPassed', 'True', 'AllTestsPassed'],
    ]);
    const writers = (await deviceHistory(handle.db, id, { limit: 10 })).items.map((h) => [h.conditionType, h.writer]);
    assert.ok(writers.some(([t, w]) => t === 'BurnInPassed' && w === 'burn-in-workflow'));
    assert.ok(writers.some(([t, w]) => t === 'BMCReachable' && w === 'satellite'));
  });

  it('keeps the newest hardware read and opens an inventory issue when the serial is not NetBox’s', async () => {
    const id = await newDevice({ serial: 'NETBOX-SERIAL', netboxId: 7000 + n });
    const job = randomUUID();
    const empty: LifecycleMemo = { rev: 1, devices: {} };
    await apply(job, empty, { [id]: hardware('BMC-SERIAL', '2026-12-04T10:00:00.000Z') });
    await apply(job, empty, { [id]: hardware('OLDER', '2026-12-04T09:00:00.000Z') });
    const stored = await getDeviceHardware(handle.db, id);
    assert.equal(stored?.serialNumber, 'BMC-SERIAL', 'an older read does not replace a newer one');
    const open = async () =>
      (
        await handle.pool.query<{ message: string }>(
          `select message from inventory_issues
            where device_id = $1 and code = 'hardware_serial_mismatch' and resolved_at is null`,
          [id],
        )
      ).rows;
    assert.match((await open())[0]?.message ?? '', /NetBox gives serial NETBOX-SERIAL but the BMC reports BMC-SERIAL/);
    await apply(job, empty, { [id]: hardware('NETBOX-SERIAL', '2026-12-04T11:00:00.000Z') });
    assert.equal((await open()).length, 0, 'resolved once the two agree');
  });
});

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { RmaTransitionRefused, type FleetLifecycleState, type HardwareRecord } from '@fleet/domain';
import {
  applyRmaRevalidation,
  deviceHardware,
  getRmaCase,
  insertDevice,
  insertSite,
  listRmaCases,
  openRmaCase,
  openRmaDraft,
  connectDb,
  setLifecycle,
  updateRmaCase,
  type DbHandle,
} from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

const record = (gpu2: string, readAt: string): HardwareRecord => ({
  readAt,
  document: { digest: `sha256:${'cd'.repeat(32)}`, bytes: 1000, resources: 140 },
  serialNumber: 'TRAY-1',
  parts: [
    { id: 'GPU_0', kind: 'gpu', serialNumber: 'GPU0-A' },
    { id: 'GPU_2', kind: 'gpu', serialNumber: gpu2 },
  ],
  nics: 2,
  firmwareComponents: 8,
  nvlinkPorts: 72,
  differences: [],
});

describe('RMA cases (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let n = 0;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 5);
    await insertSite(handle.db, { id: 'rma-01', name: 'RMA' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const newDevice = async () => (await insertDevice(handle.db, { name: `tray-${++n}`, siteId: 'rma-01' })).id;
  const readHardware = (deviceId: string, hw: HardwareRecord) =>
    handle.db
      .insert(deviceHardware)
      .values({ deviceId, readAt: new Date(hw.readAt), digest: hw.document.digest, serialNumber: 'TRAY-1', record: hw })
      .onConflictDoUpdate({ target: deviceHardware.deviceId, set: { readAt: new Date(hw.readAt), record: hw } });
  const walk = async (deviceId: string, ...states: FleetLifecycleState[]) => {
    for (const to of states)
      await setLifecycle(handle.db, {
        deviceId,
        to,
        writer: 'lifecycle-workflow',
        jobId: randomUUID(),
        reason: 'Test',
      });
  };
  const draft = (deviceId: string, jobId: string) =>
    handle.db.transaction((tx) =>
      openRmaDraft(tx, {
        deviceId,
        failedPart: 'GPU_2',
        faultClass: 'gpu',
        reason: 'hmc_reset, power_cycle did not clear gpu on GPU_2',
        jobId,
        openedBy: 'remediation',
      }),
    );
  const operatorMove = (id: string, to: 'shipped' | 'replaced' | 'revalidating' | 'closed', jobId?: string) =>
    updateRmaCase(handle.db, id, { to, mover: 'operator', by: 't-operator', reason: `to ${to}`, jobId });

  it('opens one draft per remediation job, with the serials of the last hardware read', async () => {
    const id = await newDevice();
    await readHardware(id, record('GPU2-OLD', '2025-01-01T00:00:00.000Z'));
    const job = randomUUID();
    const first = await draft(id, job);
    assert.equal(first?.opened, true);
    assert.equal(first.rmaCase.state, 'open');
    assert.equal(first.rmaCase.siteId, 'rma-01');
    assert.equal(first.rmaCase.faultClass, 'gpu');
    assert.deepEqual(first.rmaCase.oldSerials, { tray: 'TRAY-1', GPU_0: 'GPU0-A', GPU_2: 'GPU2-OLD' });
    assert.deepEqual(
      first.rmaCase.history.map((h) => [h.from, h.to, h.by, h.jobId]),
      [[null, 'open', 'remediation', job]],
    );
    // The projection applied again (a sweep after a restart) finds the case the job opened.
    const again = await draft(id, job);
    assert.equal(again?.opened, false);
    assert.equal(again.rmaCase.id, first.rmaCase.id);
    assert.equal((await listRmaCases(handle.db, { limit: 10, deviceId: [id] })).length, 1);
    assert.equal(await draft(randomUUID(), randomUUID()), undefined, 'no such device');
  });

  it('keeps one case not closed per device; a closed one lets the next open', async () => {
    const id = await newDevice();
    const opened = await openRmaCase(handle.db, {
      deviceId: id,
      failedPart: 'PSU_3',
      reason: 'the shelf smells of smoke',
      vendorCaseId: 'V-1',
      openedBy: 't-operator',
    });
    assert.equal(opened?.opened, true);
    assert.deepEqual(opened.rmaCase.oldSerials, {}, 'no hardware read yet');
    // Another remediation's escalation on the same device opens nothing and answers the open case.
    const escalated = await draft(id, randomUUID());
    assert.equal(escalated?.opened, false);
    assert.equal(escalated.rmaCase.id, opened.rmaCase.id);
    const closed = await operatorMove(opened.rmaCase.id, 'closed');
    assert.equal(closed?.state, 'closed');
    assert.ok(closed.closedAt);
    const next = await draft(id, randomUUID());
    assert.equal(next?.opened, true);
    assert.notEqual(next.rmaCase.id, opened.rmaCase.id);
    const open = await listRmaCases(handle.db, { limit: 10, deviceId: [id], state: ['open'] });
    assert.deepEqual(
      open.map((c) => c.id),
      [next.rmaCase.id],
    );
  });

  it('refuses moves the table does not list, or that belong to the other mover, naming the state', async () => {
    const id = await newDevice();
    const c = (await draft(id, randomUUID()))!.rmaCase;
    const refused = async (p: Promise<unknown>, pattern: RegExp) =>
      assert.rejects(p, (err: unknown) => {
        assert.ok(err instanceof RmaTransitionRefused);
        assert.equal(err.code, 'CONFLICT');
        assert.match(err.message, pattern);
        return true;
      });
    await refused(operatorMove(c.id, 'replaced'), /case is open: it cannot move to replaced \(it may move to shipped/);
    await refused(operatorMove(c.id, 'revalidating'), /case is open: it cannot move to revalidating/);
    await refused(
      updateRmaCase(handle.db, c.id, { to: 'shipped', mover: 'enrolment', by: 'enrolment' }),
      /only an operator moves a case to shipped/,
    );
    assert.equal((await operatorMove(c.id, 'shipped'))?.state, 'shipped');
    await refused(operatorMove(c.id, 'closed'), /case is shipped: it cannot move to closed/);
    // Asking for the state it is in moves nothing and writes no history.
    const same = await operatorMove(c.id, 'shipped');
    assert.equal(same?.history.length, 2);
    assert.equal((await getRmaCase(handle.db, c.id))?.state, 'shipped');
    assert.equal(await operatorMove(randomUUID(), 'shipped'), undefined);
  });

  it('revalidates on the enrolment of the returned device and closes with the swap once it is certified', async () => {
    const id = await newDevice();
    await readHardware(id, record('GPU2-OLD', '2025-01-01T00:00:00.000Z'));
    await walk(id, 'quarantined');
    const c = (await draft(id, randomUUID()))!.rmaCase;
    await walk(id, 'rma');
    await operatorMove(c.id, 'shipped', randomUUID());
    await walk(id, 'discovered');
    await operatorMove(c.id, 'replaced', randomUUID());
    const apply = (jobId: string, succeeded = false) =>
      handle.db.transaction((tx) => applyRmaRevalidation(tx, [{ deviceId: id, jobId, succeeded }]));

    // The enrolment starts: the case revalidates; the new read comes in with the swapped GPU.
    const enrol = randomUUID();
    await walk(id, 'enrolling');
    await readHardware(id, record('GPU2-NEW', '2025-02-01T00:00:00.000Z'));
    const started = await apply(enrol);
    assert.deepEqual(
      started.map((r) => r.state),
      ['revalidating'],
    );
    await walk(id, 'enrolled');
    assert.deepEqual(await apply(enrol), [], 'enrolled while the job still runs (burn-in to come): still revalidating');
    await walk(id, 'burning_in', 'certified');
    const [closed] = await apply(enrol);
    assert.equal(closed?.state, 'closed');
    assert.ok(closed.closedAt);
    assert.deepEqual(closed.newSerials, { tray: 'TRAY-1', GPU_0: 'GPU0-A', GPU_2: 'GPU2-NEW' });
    assert.deepEqual(closed.swap, [{ part: 'GPU_2', old: 'GPU2-OLD', new: 'GPU2-NEW' }]);
    assert.deepEqual(
      closed.history.map((h) => [h.from, h.to]),
      [
        [null, 'open'],
        ['open', 'shipped'],
        ['shipped', 'replaced'],
        ['replaced', 'revalidating'],
        ['revalidating', 'closed'],
      ],
    );
    assert.equal(closed.history.at(-1)?.jobId, enrol);
    assert.deepEqual(await apply(enrol, true), [], 'applied again: a closed case does not move');
  });

  it('closes in one projection when it only sees the job end, enrolled by a job that succeeded', async () => {
    const id = await newDevice();
    const c = (await draft(id, randomUUID()))!.rmaCase;
    await operatorMove(c.id, 'shipped');
    await operatorMove(c.id, 'replaced');
    await walk(id, 'enrolling', 'enrolled');
    const other = await newDevice();
    const [closed] = await handle.db.transaction((tx) =>
      applyRmaRevalidation(tx, [
        { deviceId: id, jobId: randomUUID(), succeeded: true },
        { deviceId: other, jobId: randomUUID(), succeeded: true },
      ]),
    );
    assert.equal(closed?.id, c.id);
    assert.equal(closed.state, 'closed');
    assert.deepEqual(closed.swap, [], 'no read before the case: no swap named');
  });
});

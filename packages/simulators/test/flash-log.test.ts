import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FlashRecord } from '../src/redfish/bmc.js';
import { profiles } from '../src/redfish/profiles/index.js';
import { admin, buildPackage, finishedTask, push, rf, startSim, type TestSim } from './helpers.js';

const firmware = profiles['gb200-compute'].firmware;
const BMC_TRAY = firmware.find((f) => f.id === 'FW_BMC_0')!.device!;
/** Every package-updatable component of the BMC tray: FW_BMC_0, FW_ERoT_BMC_0, FW_CPLD_0. */
const trayComponents = firmware.filter((f) => f.device === BMC_TRAY && f.componentId !== undefined);

const trayPackage = (version: string, stamp: number) =>
  buildPackage(
    [{ uuid: BMC_TRAY, components: trayComponents.map((_, i) => i) }],
    trayComponents.map((f) => ({ identifier: f.componentId!, stamp, version })),
  );

describe('flash log in the admin API', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([{ id: 'a' }, { id: 'b' }, { id: 'c' }], {
      timeScale: 0.001,
      timings: { firmwareUpdateS: 100, bmcRebootS: 100 },
    });
  });
  after(() => t.close());

  const flashes = async (id: string): Promise<FlashRecord[]> =>
    (await admin(t, 'GET', `/bmcs/${id}/firmware`)).body.flashes;
  const update = async (id: string, pkg: Buffer, filename: string, params: unknown = { Targets: [] }) => {
    const accepted = await push(t.url(id), params, pkg, filename);
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    return finishedTask(t.url(id), accepted.headers.get('location')!);
  };

  it('records each image a Completed task staged: component, version, stamp, task, filename and time', async () => {
    const before = Date.now();
    const task = await update('a', trayPackage('GB200Nvl-25.09-1', 700_000_000), 'tray-25.09.fwpkg');
    assert.equal(task.TaskState, 'Completed');
    const log = await flashes('a');
    assert.deepEqual(
      log.map(({ at: _at, ...f }) => f),
      trayComponents.map((f) => ({
        id: f.id,
        version: 'GB200Nvl-25.09-1',
        stamp: 700_000_000,
        taskId: task.Id,
        filename: 'tray-25.09.fwpkg',
      })),
    );
    for (const f of log) assert.ok(Date.parse(f.at) >= before - 1000 && Date.parse(f.at) <= Date.now(), f.at);
    const fw = (await admin(t, 'GET', '/bmcs/a/firmware')).body;
    assert.equal(fw.items.find((i: { id: string }) => i.id === 'FW_BMC_0').staged, 'GB200Nvl-25.09-1');
  });

  it('shows a second flash of the same component as a second entry', async () => {
    await update('b', trayPackage('GB200Nvl-25.09-1', 700_000_000), 'first.fwpkg', {
      Targets: ['/redfish/v1/UpdateService/FirmwareInventory/FW_BMC_0'],
    });
    await update('b', trayPackage('GB200Nvl-25.10-1', 700_000_001), 'second.fwpkg', {
      Targets: ['/redfish/v1/UpdateService/FirmwareInventory/FW_BMC_0'],
    });
    const log = await flashes('b');
    assert.deepEqual(
      log.map((f) => [f.id, f.version, f.filename]),
      [
        ['FW_BMC_0', 'GB200Nvl-25.09-1', 'first.fwpkg'],
        ['FW_BMC_0', 'GB200Nvl-25.10-1', 'second.fwpkg'],
      ],
    );
    assert.notEqual(log[0]!.taskId, log[1]!.taskId);
  });

  it('leaves out refused downgrades, injected failures and images already installed', async () => {
    const shipped = trayComponents[0]!;
    const downgrade = await update('c', trayPackage('GB200Nvl-24.10-1', shipped.stamp - 1), 'older.fwpkg');
    assert.equal(downgrade.TaskState, 'Exception');

    assert.equal((await admin(t, 'PUT', '/bmcs/c/faults', { taskFailure: true })).status, 200);
    assert.equal(
      (await update('c', trayPackage('GB200Nvl-25.09-1', 700_000_000), 'fails.fwpkg')).TaskState,
      'Exception',
    );
    await admin(t, 'DELETE', '/bmcs/c/faults');

    const same = await update('c', trayPackage(shipped.version, shipped.stamp), 'same.fwpkg', {
      Targets: ['/redfish/v1/UpdateService/FirmwareInventory/FW_BMC_0'],
    });
    assert.equal(same.TaskState, 'Completed');
    assert.ok(same.Messages.some((m: { MessageId: string }) => m.MessageId.endsWith('UpdateSkippedSameVersion')));
    assert.deepEqual(await flashes('c'), []);
    assert.equal((await rf(t.url('c'), 'GET', '/redfish/v1/TaskService/Tasks')).body['Members@odata.count'], 3);
  });
});

describe('action log in the admin API', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([{ id: 'a' }], { timeScale: 0.001 });
  });
  after(() => t.close());

  it('keeps every action request however many reads follow, which the request log drops', async () => {
    const reset = '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset';
    const on = await rf(t.url('a'), 'POST', reset, { body: { ResetType: 'On' } });
    assert.ok(on.status < 300, JSON.stringify(on.body));
    for (let i = 0; i < 1_050; i++) await rf(t.url('a'), 'GET', '/redfish/v1/Systems/System_0');
    const requests = (await admin(t, 'GET', '/bmcs/a/requests')).body.items as { method: string }[];
    assert.equal(requests.length, 1_000);
    assert.ok(!requests.some((r) => r.method === 'POST'), 'the reset left the request log');
    const actions = (await admin(t, 'GET', '/bmcs/a/actions')).body.items as { path: string; body: unknown }[];
    assert.deepEqual(
      actions.map((a) => [a.path, a.body]),
      [[reset, { ResetType: 'On' }]],
    );
    assert.equal((await admin(t, 'DELETE', '/bmcs/a/requests')).status, 204);
    assert.deepEqual((await admin(t, 'GET', '/bmcs/a/actions')).body.items, []);
  });
});

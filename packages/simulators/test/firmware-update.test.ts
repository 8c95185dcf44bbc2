import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { profiles } from '../src/redfish/profiles/index.js';
import {
  buildPackage,
  eventually,
  finishedTask,
  push,
  rf,
  startSim,
  type PkgComponent,
  type TestSim,
} from './helpers.js';

const gb200 = profiles['gb200-compute'];
const gb300 = profiles['gb300-compute'];
const spec = (id: string) => gb200.firmware.find((f) => f.id === id)!;
const BMC_FW = spec('FW_BMC_0');
const GPU_FW = spec('HGX_FW_GPU_0');

/** A BMC-tray package carrying FW_BMC_0 for the given tray UUID. */
const bmcPackage = (device: string, c: Partial<PkgComponent> = {}) =>
  buildPackage(
    [{ uuid: device, components: [0] }],
    [{ identifier: BMC_FW.componentId!, stamp: BMC_FW.stamp + 1, version: 'GB200Nvl-25.09-1', ...c }],
  );

const messageIds = (task: { Messages: { MessageId: string }[] }) =>
  task.Messages.map((m) => m.MessageId.replace(/\.\d+\.\d+\./, '.'));

describe('firmware update by multipart push', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd' }, { id: 'e', powerState: 'On' }], {
      timeScale: 0.001,
      timings: { firmwareUpdateS: 200, bmcRebootS: 100 },
    });
  });
  after(() => t.close());

  const version = async (base: string, id: string) =>
    (await rf(base, 'GET', `/redfish/v1/UpdateService/FirmwareInventory/${id}`)).body.Version;

  it('runs a matching package as a task, stages it, and shows it only after the BMC reboots', async () => {
    const base = t.url('a');
    const accepted = await push(base, { Targets: [], ForceUpdate: false }, bmcPackage(BMC_FW.device!));
    assert.equal(accepted.status, 202);
    const location = accepted.headers.get('location')!;
    assert.match(location, /^\/redfish\/v1\/TaskService\/Tasks\/\d+$/);
    assert.equal(accepted.body['@odata.id'], location);
    assert.equal(accepted.body.TaskState, 'New');

    const running = await eventually(async () => {
      const b = (await rf(base, 'GET', location)).body;
      return b.TaskState === 'Running' ? b : undefined;
    });
    assert.ok(running.PercentComplete < 100);

    const done = await finishedTask(base, location);
    assert.equal(done.TaskState, 'Completed');
    assert.equal(done.PercentComplete, 100);
    assert.ok(messageIds(done).includes('TaskEvent.TaskStarted'));
    assert.equal(messageIds(done).at(-1), 'TaskEvent.TaskCompletedOK');
    assert.equal(await version(base, 'FW_BMC_0'), BMC_FW.version, 'staged, not yet running');

    assert.equal(
      (
        await rf(base, 'POST', '/redfish/v1/Managers/BMC_0/Actions/Manager.Reset', {
          body: { ResetType: 'GracefulRestart' },
        })
      ).status,
      204,
    );
    const down = await eventually(async () => {
      const r = await rf(base, 'GET', '/redfish/v1/UpdateService/FirmwareInventory/FW_BMC_0');
      return r.status === 503 ? r : undefined;
    });
    assert.ok(Number(down.headers.get('retry-after')) > 0);
    assert.match(down.body.error.code, /ServiceTemporarilyUnavailable$/);
    await eventually(async () => ((await version(base, 'FW_BMC_0')) === 'GB200Nvl-25.09-1' ? true : undefined));
    assert.equal(
      await version(base, 'HGX_FW_BMC_0'),
      spec('HGX_FW_BMC_0').version,
      'components not in the package are untouched',
    );
  });

  it('activates host-side images on a power cycle', async () => {
    const base = t.url('e');
    const pkg = buildPackage(
      [{ uuid: GPU_FW.device!, components: [0] }],
      [{ identifier: GPU_FW.componentId!, stamp: GPU_FW.stamp + 5, version: '97.00.B0.00.01' }],
    );
    const accepted = await push(base, { Targets: ['/redfish/v1/Chassis/HGX_Chassis_0'] }, pkg);
    assert.equal(accepted.status, 202);
    assert.equal((await finishedTask(base, accepted.headers.get('location')!)).TaskState, 'Completed');
    assert.equal(await version(base, 'HGX_FW_GPU_0'), GPU_FW.version);
    await rf(base, 'POST', '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset', {
      body: { ResetType: 'PowerCycle' },
    });
    await eventually(async () => ((await version(base, 'HGX_FW_GPU_0')) === '97.00.B0.00.01' ? true : undefined));
  });

  it('rejects a package whose device descriptors do not match the tray', async () => {
    const res = await push(t.url('b'), { Targets: [] }, bmcPackage(gb300.firmware[0]!.device!));
    assert.equal(res.status, 400);
    const ids = res.body.error['@Message.ExtendedInfo'].map((m: { MessageId: string }) => m.MessageId.split('.').pop());
    assert.deepEqual(ids, ['ActionParameterValueError', 'UpdateNotApplicable']);
    assert.equal((await rf(t.url('b'), 'GET', '/redfish/v1/TaskService/Tasks')).body['Members@odata.count'], 0);
  });

  it('rejects a corrupted package header', async () => {
    const pkg = bmcPackage(BMC_FW.device!);
    pkg[40] = pkg[40]! ^ 0xff;
    const res = await push(t.url('b'), { Targets: [] }, pkg);
    assert.equal(res.status, 400);
    assert.match(res.body.error['@Message.ExtendedInfo'][1].MessageId, /VerificationFailed$/);
  });

  it('rejects a target that is not part of the tray', async () => {
    const res = await push(
      t.url('b'),
      { Targets: ['/redfish/v1/UpdateService/FirmwareInventory/NoSuch'] },
      bmcPackage(BMC_FW.device!),
    );
    assert.equal(res.status, 400);
    assert.match(res.body.error.code, /ActionParameterValueNotInList$/);
  });

  it('refuses a downgrade unless ForceUpdate is set', async () => {
    const base = t.url('c');
    const older = bmcPackage(BMC_FW.device!, { stamp: BMC_FW.stamp - 1, version: 'GB200Nvl-24.10-1' });
    const first = await push(
      base,
      { Targets: ['/redfish/v1/UpdateService/FirmwareInventory/FW_BMC_0'], ForceUpdate: false },
      older,
    );
    assert.equal(first.status, 202);
    const failed = await finishedTask(base, first.headers.get('location')!);
    assert.equal(failed.TaskState, 'Exception');
    assert.equal(failed.TaskStatus, 'Critical');
    const stamp = failed.Messages.find((m: { MessageId: string }) => m.MessageId.endsWith('ResourceErrorsDetected'));
    assert.deepEqual(stamp.MessageArgs, ['FW_BMC_0', 'Component comparison stamp is lower']);
    assert.equal(messageIds(failed).at(-1), 'TaskEvent.TaskAborted');

    const forced = await push(base, { Targets: [], ForceUpdate: true }, older);
    assert.equal((await finishedTask(base, forced.headers.get('location')!)).TaskState, 'Completed');
    const fw = await fetch(`${t.adminUrl}/bmcs/c/firmware`).then(
      (r) => r.json() as Promise<{ items: { id: string; staged?: string }[] }>,
    );
    assert.equal(fw.items.find((i) => i.id === 'FW_BMC_0')!.staged, 'GB200Nvl-24.10-1');
  });

  it('streams a large image: only the size is recorded, and one update runs at a time', async () => {
    const base = t.url('d');
    const big = bmcPackage(BMC_FW.device!, { size: 24 * 1024 * 1024 });
    const first = await push(base, { Targets: [] }, big, 'big.fwpkg');
    assert.equal(first.status, 202);
    const second = await push(base, { Targets: [] }, bmcPackage(BMC_FW.device!));
    assert.equal(second.status, 503);
    assert.ok(second.headers.get('retry-after'));
    const log = await fetch(`${t.adminUrl}/bmcs/d/requests`).then(
      (r) => r.json() as Promise<{ items: { body?: { UpdateFile?: { size: number; filename: string } } }[] }>,
    );
    assert.equal(log.items[0]!.body!.UpdateFile!.filename, 'big.fwpkg');
    assert.equal(log.items[0]!.body!.UpdateFile!.size, big.length);
    await finishedTask(base, first.headers.get('location')!);
  });

  it('refuses a push without UpdateParameters', async () => {
    const boundary = 'xyz';
    const body =
      `--${boundary}\r\nContent-Disposition: form-data; name="UpdateFile"; ` +
      `filename="f"\r\n\r\nabc\r\n--${boundary}--\r\n`;
    const res = await fetch(`${t.url('b')}/redfish/v1/UpdateService/update-multipart`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('admin:secret-pw').toString('base64')}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      body,
    });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: { code: string } }).error.code, /MissingOrMalformedPart$/);
  });
});

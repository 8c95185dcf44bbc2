import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { profiles } from '../src/redfish/profiles/index.js';
import { admin, buildPackage, finishedTask, push, sleep, startSim, type TestSim } from './helpers.js';

const firmware = profiles['gb200-compute'].firmware;
const BMC_TRAY = firmware.find((f) => f.id === 'FW_BMC_0')!.device!;
const trayComponents = firmware.filter((f) => f.device === BMC_TRAY && f.componentId !== undefined);
const trayPackage = buildPackage(
  [{ uuid: BMC_TRAY, components: trayComponents.map((_, i) => i) }],
  trayComponents.map((f) => ({ identifier: f.componentId!, stamp: 700_000_000, version: 'GB200Nvl-25.09-1' })),
);

/** Faults a remediation playbook step tells apart: one that only AC loss ends, one that only a reflash ends. */
describe('faults that only AC loss or a reflash clears', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim(
      [
        { id: 'shelf', profile: 'powershelf-delta', powerDomain: 'rack-a' },
        { id: 'ct', powerState: 'On', powerDomain: 'rack-a' },
      ],
      { timeScale: 0.001, timings: { firmwareUpdateS: 100, bmcRebootS: 100 } },
    );
  });
  after(() => t.close());

  const faults = async () => (await admin(t, 'GET', '/bmcs/ct/health/faults')).body.items as { part: string }[];
  const inject = async (clearsOn: string) => {
    const res = await admin(t, 'POST', '/bmcs/ct/health/faults', { part: 'gpu', gpu: 1, clearsOn });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const acCycle = async () => {
    t.sim.bmc('shelf').reset('ForceOff');
    assert.equal(t.sim.bmc('ct').acLost, true);
    t.sim.bmc('shelf').reset('On');
    await sleep(300);
  };

  it('refuses a clearing event it does not know', async () => {
    const res = await admin(t, 'POST', '/bmcs/ct/health/faults', { part: 'gpu', gpu: 1, clearsOn: 'prayer' });
    assert.equal(res.status, 400);
    assert.match(String(res.body.error), /clearsOn/);
  });

  it('an ac_loss fault outlives BMC and host resets and ends when the shelves cut AC and restore it', async () => {
    await inject('ac_loss');
    t.sim.bmc('ct').rebootManager();
    t.sim.bmc('ct').reset('PowerCycle');
    await sleep(300);
    assert.deepEqual(
      (await faults()).map((f) => f.part),
      ['gpu/1'],
      'resets leave it',
    );
    await acCycle();
    assert.deepEqual(await faults(), []);
  });

  it('a reflash fault outlives AC loss and ends when a firmware image activates', async () => {
    await inject('reflash');
    await acCycle();
    assert.deepEqual(
      (await faults()).map((f) => f.part),
      ['gpu/1'],
      'AC loss leaves it',
    );
    const accepted = await push(t.url('ct'), { Targets: [] }, trayPackage, 'tray.fwpkg');
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    assert.equal((await finishedTask(t.url('ct'), accepted.headers.get('location')!)).TaskState, 'Completed');
    assert.deepEqual(
      (await faults()).map((f) => f.part),
      ['gpu/1'],
      'staged, not yet running',
    );
    t.sim.bmc('ct').rebootManager();
    await sleep(300);
    assert.deepEqual(await faults(), []);
  });
});

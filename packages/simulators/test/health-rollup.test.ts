import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { admin, rf, startSim, type TestSim } from './helpers.js';

// What a health observer reads first: the rollup of the device's own chassis must turn when any part in it is faulted.
const TRAY = '/redfish/v1/Chassis/BMC_0';
const SHELF = '/redfish/v1/Chassis/powershelf';
const chassisOf = (id: string) => `/redfish/v1/Chassis/${id}`;

describe('health rollups of the device chassis, and thermal faults', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([
      { id: 'ct', powerState: 'On' },
      { id: 'sw', profile: 'nvswitch-tray', powerState: 'On' },
      { id: 'shelf', profile: 'powershelf-delta' },
    ]);
  });
  after(() => t.close());
  beforeEach(async () => {
    for (const id of ['ct', 'shelf']) assert.equal((await admin(t, 'DELETE', `/bmcs/${id}/health/faults`)).status, 204);
  });

  const get = async (id: string, path: string) => {
    const res = await rf(t.url(id), 'GET', path);
    assert.equal(res.status, 200, `${id} ${path}`);
    return res.body;
  };
  const status = async (id: string, path: string) => (await get(id, path)).Status;
  const inject = async (id: string, fault: unknown, expect = 200) => {
    const res = await admin(t, 'POST', `/bmcs/${id}/health/faults`, fault);
    assert.equal(res.status, expect, JSON.stringify(res.body));
    return res.body;
  };

  it('the compute tray chassis contains the CBC and the HGX zone, and a GPU fault turns both rollups', async () => {
    const tray = await get('ct', TRAY);
    assert.deepEqual(
      tray.Links.Contains.map((l: { '@odata.id': string }) => l['@odata.id']),
      ['ERoT_BMC_0', 'CPLD_0', 'CBC_0', 'HGX_Chassis_0'].map(chassisOf),
    );
    assert.deepEqual(tray.Status, { State: 'Enabled', Health: 'OK', HealthRollup: 'OK' });

    await inject('ct', { part: 'gpu', gpu: 2, offBus: true });
    assert.deepEqual(await status('ct', TRAY), { State: 'Enabled', Health: 'OK', HealthRollup: 'Critical' });
    assert.deepEqual(await status('ct', chassisOf('HGX_Chassis_0')), {
      State: 'Enabled',
      Health: 'OK',
      HealthRollup: 'Critical',
    });
    assert.equal((await status('ct', '/redfish/v1/Systems/System_0')).HealthRollup, 'OK', 'GPUs are not the host');

    await admin(t, 'DELETE', '/bmcs/ct/health/faults');
    await inject('ct', { part: 'nvlink', gpu: 0, port: 1, health: 'Warning' });
    assert.equal((await status('ct', TRAY)).HealthRollup, 'Warning');
    await inject('ct', { part: 'memory', memory: 'ProcessorModule_0_Memory_0' });
    assert.equal((await status('ct', TRAY)).HealthRollup, 'Critical', 'Grace memory is on the tray too');
  });

  it('the switch tray chassis rolls up the NVSwitch chassis it contains', async () => {
    const tray = await get('sw', TRAY);
    assert.deepEqual(
      tray.Links.Contains.map((l: { '@odata.id': string }) => l['@odata.id']),
      ['ERoT_BMC_0', 'NVSwitch_0', 'NVSwitch_1'].map(chassisOf),
    );
    assert.equal(tray.Status.HealthRollup, 'OK');
  });

  it('a thermal fault puts the reading past its threshold and shows up to the tray chassis, logged', async () => {
    await inject('ct', { part: 'thermal', sensor: 'TEMP_INLET', health: 'Warning', reason: 'blocked intake' });
    const sensor = await get('ct', `${TRAY}/Sensors/TEMP_INLET`);
    assert.equal(sensor.Reading, 42.5);
    assert.equal(sensor.Status.Health, 'Warning');
    const metrics = await get('ct', `${TRAY}/ThermalSubsystem/ThermalMetrics`);
    assert.equal(metrics.TemperatureReadingsCelsius[0].Reading, 42.5);
    assert.equal((await status('ct', `${TRAY}/ThermalSubsystem`)).HealthRollup, 'Warning');
    assert.equal((await status('ct', TRAY)).HealthRollup, 'Warning');
    const entries = await get('ct', '/redfish/v1/Systems/System_0/LogServices/EventLog/Entries');
    assert.equal(entries.Members.at(-1).MessageId, 'ResourceEvent.1.4.ResourceStatusChangedWarning');
    assert.deepEqual(entries.Members.at(-1).MessageArgs, ['TEMP_INLET', 'Warning']);
    const report = (await admin(t, 'GET', '/bmcs/ct/health')).body;
    assert.equal(report.verdict, 'fail');
    assert.deepEqual(report.failures, ['TEMP_INLET: Warning (blocked intake)']);
    assert.deepEqual(
      report.overheating.map((o: { sensor: string; health: string }) => [o.sensor, o.health]),
      [['TEMP_INLET', 'Warning']],
    );

    await admin(t, 'DELETE', '/bmcs/ct/health/faults');
    assert.equal((await get('ct', `${TRAY}/Sensors/TEMP_INLET`)).Reading, 25);
    assert.equal((await status('ct', TRAY)).HealthRollup, 'OK');

    await inject('ct', { part: 'thermal', sensor: 'HGX_GPU_0_Temp_0' }, 400);
    await inject('sw', { part: 'thermal', sensor: 'TEMP_INLET' }, 409);
  });

  it('a Critical thermal fault on a shelf PSU sensor reads past UpperCritical and turns the shelf', async () => {
    await inject('shelf', { part: 'thermal', sensor: 'PSU_1_Temp_0' });
    const sensor = await get('shelf', `${SHELF}/Sensors/PSU_1_Temp_0`);
    assert.equal(sensor.Reading, 82);
    assert.equal(sensor.Status.Health, 'Critical');
    assert.equal((await status('shelf', SHELF)).HealthRollup, 'Critical');
    assert.deepEqual((await admin(t, 'GET', '/bmcs/shelf/health')).body.failures, [
      'PSU_1_Temp_0: Critical (injected critical fault)',
    ]);
  });
});

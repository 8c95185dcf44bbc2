import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { admin, basic, eventually, rf, startSim, type TestSim } from './helpers.js';

const HGX = '/redfish/v1/Systems/HGX_Baseboard_0';
const SHELF = '/redfish/v1/Chassis/powershelf';
const PSU = (i: number) => `${SHELF}/PowerSubsystem/PowerSupplies/PSU_${i}`;
const TRAY = '/redfish/v1/Chassis/BMC_0';
const DETECTOR = (i: number) => `${TRAY}/ThermalSubsystem/LeakDetection/LeakDetectors/LeakDetector_${i}`;

describe('health observation: sensors, leak detection, PSUs and the faults they show', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim(
      [
        { id: 'ct1', powerState: 'On' },
        { id: 'ct2', powerState: 'On' },
        { id: 'sw1', profile: 'nvswitch-tray', powerState: 'On' },
        { id: 'lite', profile: 'powershelf-liteon' },
        { id: 'delta', profile: 'powershelf-delta' },
        { id: 'ps-a', profile: 'powershelf-delta', powerDomain: 'rack-a' },
        { id: 'ct-a', powerState: 'On', powerDomain: 'rack-a' },
      ],
      { timings: { bmcRebootS: 50 } },
    );
  });
  after(() => t.close());
  beforeEach(async () => {
    for (const id of ['ct1', 'ct2', 'lite']) await admin(t, 'DELETE', `/bmcs/${id}/health/faults`);
  });

  const get = async (id: string, path: string) => {
    const res = await rf(t.url(id), 'GET', path);
    assert.equal(res.status, 200, `${id} ${path}`);
    assert.equal(res.body['@odata.id'], path);
    assert.match(res.body['@odata.type'], /^#\w+\.(v\d+_\d+_\d+\.)?\w+$/);
    return res.body;
  };
  const inject = async (id: string, fault: unknown, status = 200) => {
    const res = await admin(t, 'POST', `/bmcs/${id}/health/faults`, fault);
    assert.equal(res.status, status, JSON.stringify(res.body));
    return res.body;
  };

  it('every chassis with sensors serves Sensors and ThermalSubsystem/ThermalMetrics', async () => {
    const chassis: [string, string, number][] = [
      ['ct1', TRAY, 3],
      ['ct1', '/redfish/v1/Chassis/HGX_GPU_0', 2],
      ['ct1', '/redfish/v1/Chassis/HGX_CPU_1', 1],
      ['sw1', '/redfish/v1/Chassis/BMC_0', 2],
      ['sw1', '/redfish/v1/Chassis/NVSwitch_1', 1],
      ['lite', SHELF, 6],
    ];
    for (const [id, path, temps] of chassis) {
      const body = await get(id, path);
      const sensors = await get(id, body.Sensors['@odata.id']);
      assert.equal(sensors['@odata.type'], '#SensorCollection.SensorCollection');
      for (const m of sensors.Members) {
        const s = await get(id, m['@odata.id']);
        assert.ok(typeof s.Reading === 'number', `${m['@odata.id']} reads a number`);
        assert.ok(['Cel', 'W', 'V'].includes(s.ReadingUnits));
        assert.equal(s.Status.Health, 'OK');
      }
      const thermal = await get(id, body.ThermalSubsystem['@odata.id']);
      assert.equal(thermal.Status.HealthRollup, 'OK');
      const metrics = await get(id, thermal.ThermalMetrics['@odata.id']);
      assert.equal(metrics.TemperatureReadingsCelsius.length, temps, `${id} ${path}`);
      for (const r of metrics.TemperatureReadingsCelsius) {
        const sensor = await get(id, r.DataSourceUri);
        assert.equal(sensor.ReadingType, 'Temperature');
        assert.equal(sensor.Reading, r.Reading);
      }
    }
    const hot = (await get('ct1', '/redfish/v1/Chassis/HGX_GPU_0/Sensors/HGX_GPU_0_Temp_0')).Reading;
    await rf(t.url('ct2'), 'POST', '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset', {
      body: { ResetType: 'ForceOff' },
    });
    const cold = (await get('ct2', '/redfish/v1/Chassis/HGX_GPU_0/Sensors/HGX_GPU_0_Temp_0')).Reading;
    assert.ok(cold < hot, 'a GPU runs cooler with the host off');
    await rf(t.url('ct2'), 'POST', '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset', {
      body: { ResetType: 'On' },
    });
  });

  it('a leak detector trips: DetectorState, rolled up to LeakDetection, ThermalSubsystem and the tray', async () => {
    const detection = await get('ct1', `${TRAY}/ThermalSubsystem/LeakDetection`);
    const detectors = await get('ct1', detection.LeakDetectors['@odata.id']);
    assert.deepEqual(
      detectors.Members.map((m: { '@odata.id': string }) => m['@odata.id']),
      [DETECTOR(0), DETECTOR(1)],
    );
    const healthy = await get('ct1', DETECTOR(1));
    assert.equal(healthy.DetectorState, 'OK');
    assert.equal(healthy.LeakDetectorType, 'Moisture');

    await inject('ct1', { part: 'leak', detector: 1, health: 'Warning', reason: 'moisture at GPU manifold' });
    assert.equal((await get('ct1', DETECTOR(1))).DetectorState, 'Warning');
    assert.equal((await get('ct1', DETECTOR(0))).DetectorState, 'OK');
    assert.equal((await get('ct1', `${TRAY}/ThermalSubsystem/LeakDetection`)).Status.HealthRollup, 'Warning');
    await inject('ct1', { part: 'leak', detector: 1 });
    const tripped = await get('ct1', DETECTOR(1));
    assert.equal(tripped.DetectorState, 'Critical');
    assert.equal(tripped.Status.Health, 'Critical');
    assert.equal((await get('ct1', `${TRAY}/ThermalSubsystem`)).Status.HealthRollup, 'Critical');
    const tray = await get('ct1', TRAY);
    assert.equal(tray.Status.Health, 'OK');
    assert.equal(tray.Status.HealthRollup, 'Critical');
    assert.equal((await get('ct2', DETECTOR(1))).DetectorState, 'OK', 'only the tray it was injected on');

    const entries = await get('ct1', '/redfish/v1/Systems/System_0/LogServices/EventLog/Entries');
    const last = entries.Members.at(-1);
    assert.equal(last.MessageId, 'ResourceEvent.1.4.ResourceStatusChangedCritical');
    assert.deepEqual(last.MessageArgs, ['LeakDetector_1', 'Critical']);
    assert.equal(last.Links.OriginOfCondition['@odata.id'], DETECTOR(1));
    const report = (await admin(t, 'GET', '/bmcs/ct1/health')).body;
    assert.equal(report.verdict, 'fail');
    assert.deepEqual(report.failures, ['LeakDetector_1: Critical (injected critical fault)']);
    assert.equal(report.leakDetectors[1].state, 'Critical');

    await inject('ct1', { part: 'leak', detector: 2 }, 400);
    await inject('sw1', { part: 'leak', detector: 0 }, 409);
  });

  it('a GPU that falls off the bus stays listed as Absent, and the counts drop', async () => {
    const summary = async () => (await get('ct1', HGX)).ProcessorSummary;
    assert.equal((await summary()).Count, 4);
    const memory = (await get('ct1', HGX)).MemorySummary.TotalSystemMemoryGiB;

    await inject('ct1', { part: 'gpu', gpu: 1, offBus: true });
    const gpu = await get('ct1', `${HGX}/Processors/GPU_1`);
    assert.equal(gpu.Status.State, 'Absent');
    assert.equal(gpu.Status.Health, 'Critical');
    assert.match(gpu.Status.Conditions[0].Message, /fell off the bus/);
    const members = (await get('ct1', `${HGX}/Processors`)).Members;
    assert.equal(members.length, 4, 'the inventory keeps its slot, as bmcweb does');
    assert.equal((await summary()).Count, 3);
    assert.equal((await summary()).Status.HealthRollup, 'Critical');
    assert.ok((await get('ct1', HGX)).MemorySummary.TotalSystemMemoryGiB < memory);
    assert.equal((await get('ct1', `${HGX}/Memory/GPU_1_DRAM_0`)).Status.State, 'Absent');
    assert.equal((await get('ct1', '/redfish/v1/Chassis/HGX_GPU_1')).Status.State, 'Absent');
    assert.equal((await get('ct1', `${HGX}/Processors/GPU_1/Ports/NVLink_3`)).LinkStatus, 'LinkDown');
    assert.equal((await get('ct1', `${HGX}/Processors/GPU_0/Ports/NVLink_3`)).LinkStatus, 'LinkUp');
    assert.equal((await get('ct1', '/redfish/v1/Chassis/HGX_GPU_1/Sensors/HGX_GPU_1_Temp_0')).Reading, null);

    const report = (await admin(t, 'GET', '/bmcs/ct1/health')).body;
    assert.deepEqual(report.failures, ['GPU_1: Critical (fell off the bus)']);
    assert.equal(report.gpus[1].present, false);
    assert.equal(report.nvlink.up, 54);
    await inject('ct1', { part: 'gpu', gpu: 0, offBus: true, health: 'Warning' }, 400);

    await admin(t, 'DELETE', '/bmcs/ct1/health/faults');
    assert.equal((await summary()).Count, 4);
    assert.equal((await get('ct1', `${HGX}/Processors/GPU_1`)).Status.State, 'Enabled');
  });

  it('a PSU failure shows on the PSU, the power subsystem, the shelf, its sensors and the legacy Power', async () => {
    const fault = await inject('lite', { part: 'psu', psu: 3, reason: 'output overcurrent' });
    assert.deepEqual(
      fault.items.map((f: { part: string }) => f.part),
      ['psu/3'],
    );
    const psu = await get('lite', PSU(3));
    assert.equal(psu.Status.Health, 'Critical');
    assert.equal(psu.Status.Conditions[0].MessageId, 'ResourceEvent.1.4.ResourceErrorsDetected');
    assert.deepEqual(psu.Status.Conditions[0].MessageArgs, ['PSU_3', 'output overcurrent']);
    assert.equal((await get('lite', PSU(2))).Status.Health, 'OK');
    const subsystem = await get('lite', `${SHELF}/PowerSubsystem`);
    assert.equal(subsystem.Status.HealthRollup, 'Critical');
    assert.equal(subsystem.PowerSupplyRedundancy[0].Status.Health, 'Warning', 'N+1 without its spare');
    const shelf = await get('lite', SHELF);
    assert.equal(shelf.Status.HealthRollup, 'Critical');
    assert.equal((await get('lite', `${SHELF}/Sensors/PSU_3_OutputPower_0`)).Reading, 0);
    assert.ok((await get('lite', `${SHELF}/Sensors/PSU_2_OutputPower_0`)).Reading > 0);
    const legacy = await get('lite', shelf.Power['@odata.id']);
    assert.equal(legacy.PowerSupplies.length, 6);
    assert.equal(legacy.PowerSupplies[3].Status.Health, 'Critical');
    assert.equal(legacy.PowerSupplies[3]['@odata.id'], `${SHELF}/Power#/PowerSupplies/3`);

    const log = await get('lite', '/redfish/v1/Managers/BMC_0/LogServices/EventLog/Entries');
    assert.deepEqual(log.Members.at(-1).MessageArgs, ['PSU_3', 'output overcurrent']);
    assert.equal(log.Members.at(-1).Links.OriginOfCondition['@odata.id'], PSU(3));
    const report = (await admin(t, 'GET', '/bmcs/lite/health')).body;
    assert.deepEqual(report.failures, ['PSU_3: Critical (output overcurrent)']);

    await inject('lite', { part: 'psu', psu: 4 });
    assert.equal((await get('lite', `${SHELF}/PowerSubsystem`)).PowerSupplyRedundancy[0].Status.Health, 'Critical');
    await inject('lite', { part: 'psu', psu: 6 }, 400);
    await inject('lite', { part: 'gpu', gpu: 0 }, 409);
    await inject('ct1', { part: 'psu', psu: 0 }, 409);
    assert.equal((await admin(t, 'POST', '/bmcs/lite/health/swap', { part: 'gpu', gpu: 0 })).status, 409);
  });

  it('only LITE-ON shelves still serve the deprecated Chassis Power resource', async () => {
    assert.equal((await get('delta', SHELF)).Power, undefined);
    assert.equal((await rf(t.url('delta'), 'GET', `${SHELF}/Power`)).status, 404);
    assert.equal((await rf(t.url('ct1'), 'GET', `${TRAY}/Power`)).status, 404);
    assert.equal((await rf(t.url('ct1'), 'GET', `${TRAY}/Thermal`)).status, 404);
  });

  it('a tray that stops answering times out or resets every request until cleared', async () => {
    const put = await admin(t, 'PUT', '/bmcs/ct2/health/unresponsive', {});
    assert.equal(put.status, 200);
    assert.equal(put.body.unresponsive.mode, 'timeout');
    const timedOut = await fetch(`${t.url('ct2')}/redfish/v1`, { signal: AbortSignal.timeout(300) }).catch(
      (e: Error) => e.name,
    );
    assert.equal(timedOut, 'TimeoutError');
    assert.equal((await rf(t.url('ct1'), 'GET', '/redfish/v1')).status, 200, 'other trays answer');
    assert.equal((await admin(t, 'GET', '/bmcs/ct2')).body.unresponsive.mode, 'timeout');
    const report = (await admin(t, 'GET', '/bmcs/ct2/health')).body;
    assert.deepEqual(report.failures, ['the BMC does not answer Redfish (timeout)']);

    await admin(t, 'PUT', '/bmcs/ct2/health/unresponsive', { mode: 'reset' });
    const reset = await fetch(`${t.url('ct2')}/redfish/v1`).catch((e: Error) => e.message);
    assert.equal(reset, 'fetch failed');
    assert.equal((await admin(t, 'PUT', '/bmcs/ct2/health/unresponsive', { mode: 'slow' })).status, 400);

    assert.equal((await admin(t, 'DELETE', '/bmcs/ct2/health/unresponsive')).status, 204);
    assert.equal((await rf(t.url('ct2'), 'GET', '/redfish/v1')).status, 200);
    assert.deepEqual((await admin(t, 'GET', '/bmcs/ct2/health/unresponsive')).body, { unresponsive: null });
  });

  it('with clearOnReboot, an AC cycle of its rack brings the tray back', async () => {
    await admin(t, 'PUT', '/bmcs/ct-a/health/unresponsive', { mode: 'reset', clearOnReboot: true });
    const shelf = `${SHELF}/Actions/Chassis.Reset`;
    assert.equal((await rf(t.url('ps-a'), 'POST', shelf, { body: { ResetType: 'ForceOff' } })).status, 204);
    assert.equal((await rf(t.url('ps-a'), 'POST', shelf, { body: { ResetType: 'On' } })).status, 204);
    await eventually(async () => {
      const res = await rf(t.url('ct-a'), 'GET', '/redfish/v1').catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    });
    assert.equal((await admin(t, 'GET', '/bmcs/ct-a')).body.unresponsive, null);
  });

  it('with answersManagerReset, a Manager.Reset is the one request served, and the reboot brings it back', async () => {
    const bad = await admin(t, 'PUT', '/bmcs/ct2/health/unresponsive', { answersManagerReset: true });
    assert.equal(bad.status, 400, 'a reset that does not clear the fault changes nothing');
    const fault = { mode: 'timeout', clearOnReboot: true, answersManagerReset: true };
    assert.equal((await admin(t, 'PUT', '/bmcs/ct2/health/unresponsive', fault)).status, 200);
    const timedOut = await fetch(`${t.url('ct2')}/redfish/v1/Managers/BMC_0`, {
      headers: { authorization: basic },
      signal: AbortSignal.timeout(300),
    }).catch((e: Error) => e.name);
    assert.equal(timedOut, 'TimeoutError');
    const reset = await rf(t.url('ct2'), 'POST', '/redfish/v1/Managers/BMC_0/Actions/Manager.Reset', {
      body: { ResetType: 'ForceRestart' },
    });
    assert.equal(reset.status, 204);
    await eventually(async () => ((await rf(t.url('ct2'), 'GET', '/redfish/v1')).status === 200 ? true : undefined));
    assert.equal((await admin(t, 'GET', '/bmcs/ct2')).body.unresponsive, null);
  });
});

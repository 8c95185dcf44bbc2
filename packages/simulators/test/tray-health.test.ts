import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { admin, rf, startSim, type TestSim } from './helpers.js';

const HGX = '/redfish/v1/Systems/HGX_Baseboard_0';
const gpu = (i: number) => `${HGX}/Processors/GPU_${i}`;
const port = (g: number, l: number) => `${gpu(g)}/Ports/NVLink_${l}`;

describe('per-tray health model with injectable faults', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([
      { id: 'ct01', powerState: 'On' },
      { id: 'ct02', powerState: 'On' },
      { id: 'ct03' },
      { id: 'shelf', profile: 'powershelf-delta' },
    ]);
  });
  after(() => t.close());
  beforeEach(async () => {
    for (const id of ['ct01', 'ct02'])
      assert.equal((await admin(t, 'DELETE', `/bmcs/${id}/health/faults`)).status, 204);
  });

  const inject = async (id: string, fault: unknown) => {
    const res = await admin(t, 'POST', `/bmcs/${id}/health/faults`, fault);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const health = async (id: string) => (await admin(t, 'GET', `/bmcs/${id}/health`)).body;
  const gpuHealths = async (id: string) =>
    Promise.all([0, 1, 2, 3].map(async (g) => (await rf(t.url(id), 'GET', gpu(g))).body.Status.Health));

  it('a healthy tray that is on passes', async () => {
    const report = await health('ct01');
    assert.equal(report.verdict, 'pass');
    assert.deepEqual(report.failures, []);
    assert.equal(report.gpus.length, 4);
    assert.equal(report.memory.length, 6);
    assert.deepEqual(report.nvlink, { ports: 72, up: 72, faults: [] });
  });

  it('a GPU fault shows on exactly that GPU of exactly that tray, and fails only that tray', async () => {
    await inject('ct01', { part: 'gpu', gpu: 2, reason: 'XID 79: fell off the bus' });
    assert.deepEqual(await gpuHealths('ct01'), ['OK', 'OK', 'Critical', 'OK']);
    assert.deepEqual(await gpuHealths('ct02'), ['OK', 'OK', 'OK', 'OK']);

    const faulty = (await rf(t.url('ct01'), 'GET', gpu(2))).body;
    assert.equal(faulty.Status.HealthRollup, 'Critical');
    assert.equal(faulty.Status.Conditions.length, 1);
    assert.match(faulty.Status.Conditions[0].MessageId, /^ResourceEvent\.1\.\d+\.ResourceErrorsDetected$/);
    assert.match(faulty.Status.Conditions[0].Message, /XID 79/);
    assert.equal((await rf(t.url('ct01'), 'GET', '/redfish/v1/Chassis/HGX_GPU_2')).body.Status.Health, 'Critical');
    const baseboard = (await rf(t.url('ct01'), 'GET', HGX)).body;
    assert.equal(baseboard.Status.HealthRollup, 'Critical');
    assert.equal(baseboard.ProcessorSummary.Status.Health, 'Critical');
    assert.equal((await rf(t.url('ct02'), 'GET', HGX)).body.Status.HealthRollup, 'OK');

    const report = await health('ct01');
    assert.equal(report.verdict, 'fail');
    assert.deepEqual(report.failures, ['GPU_2: Critical (XID 79: fell off the bus)']);
    assert.deepEqual(
      report.gpus.map((g: { health: string }) => g.health),
      ['OK', 'OK', 'Critical', 'OK'],
    );
    assert.equal((await health('ct02')).verdict, 'pass');
  });

  it('a memory fault shows on the memory device, its GPU rollup and the memory summary', async () => {
    await inject('ct02', { part: 'memory', memory: 'GPU_1_DRAM_0', health: 'Warning', reason: 'row remap pending' });
    const hbm = (await rf(t.url('ct02'), 'GET', `${HGX}/Memory/GPU_1_DRAM_0`)).body;
    assert.equal(hbm.Status.Health, 'Warning');
    const g1 = (await rf(t.url('ct02'), 'GET', gpu(1))).body;
    assert.deepEqual([g1.Status.Health, g1.Status.HealthRollup], ['OK', 'Warning']);
    assert.equal((await rf(t.url('ct02'), 'GET', HGX)).body.MemorySummary.Status.Health, 'Warning');
    assert.equal(
      (await rf(t.url('ct02'), 'GET', '/redfish/v1/Systems/System_0')).body.MemorySummary.Status.Health,
      'OK',
      'the Grace memory is not affected',
    );
    assert.deepEqual((await health('ct02')).failures, ['GPU_1_DRAM_0: Warning (row remap pending)']);

    await inject('ct02', { part: 'memory', memory: 'ProcessorModule_0_Memory_0' });
    const sys = (await rf(t.url('ct02'), 'GET', '/redfish/v1/Systems/System_0')).body;
    assert.equal(sys.MemorySummary.Status.Health, 'Critical');
    assert.equal(sys.Status.HealthRollup, 'Critical');
  });

  it('a Critical NVLink fault takes that one port down; a Warning leaves it up but degraded', async () => {
    await inject('ct01', { part: 'nvlink', gpu: 0, port: 5 });
    await inject('ct01', { part: 'nvlink', gpu: 3, port: 17, health: 'Warning', reason: 'replay errors' });
    const down = (await rf(t.url('ct01'), 'GET', port(0, 5))).body;
    assert.deepEqual([down.LinkStatus, down.Status.Health, down.CurrentSpeedGbps], ['LinkDown', 'Critical', 0]);
    const degraded = (await rf(t.url('ct01'), 'GET', port(3, 17))).body;
    assert.deepEqual([degraded.LinkStatus, degraded.Status.Health], ['LinkUp', 'Warning']);
    const neighbour = (await rf(t.url('ct01'), 'GET', port(0, 4))).body;
    assert.deepEqual([neighbour.LinkStatus, neighbour.Status.Health], ['LinkUp', 'OK']);
    assert.equal((await rf(t.url('ct01'), 'GET', gpu(0))).body.Status.HealthRollup, 'Critical');

    const report = await health('ct01');
    assert.equal(report.verdict, 'fail');
    assert.equal(report.nvlink.up, 71);
    assert.deepEqual(
      report.nvlink.faults.map((f: { id: string; linkUp: boolean }) => [f.id, f.linkUp]),
      [
        ['GPU_0/NVLink_5', false],
        ['GPU_3/NVLink_17', true],
      ],
    );
  });

  it('clearing the faults restores health everywhere', async () => {
    await admin(t, 'PUT', `/bmcs/ct01/health/faults`, {
      faults: [
        { part: 'gpu', gpu: 0 },
        { part: 'nvlink', gpu: 1, port: 0 },
      ],
    });
    assert.equal((await health('ct01')).failures.length, 2);
    assert.equal((await admin(t, 'DELETE', '/bmcs/ct01/health/faults')).status, 204);
    assert.deepEqual(await gpuHealths('ct01'), ['OK', 'OK', 'OK', 'OK']);
    assert.equal((await rf(t.url('ct01'), 'GET', port(1, 0))).body.LinkStatus, 'LinkUp');
    assert.equal((await rf(t.url('ct01'), 'GET', HGX)).body.Status.HealthRollup, 'OK');
    assert.equal((await health('ct01')).verdict, 'pass');
  });

  it('swapping a GPU gives it (and its HBM) a new serial, clears its faults and leaves other parts alone', async () => {
    const base = t.url('ct02');
    const read = async () => ({
      gpu2: (await rf(base, 'GET', gpu(2))).body.SerialNumber,
      chassis2: (await rf(base, 'GET', '/redfish/v1/Chassis/HGX_GPU_2')).body.SerialNumber,
      hbm2: (await rf(base, 'GET', `${HGX}/Memory/GPU_2_DRAM_0`)).body.SerialNumber,
      gpu3: (await rf(base, 'GET', gpu(3))).body.SerialNumber,
      tray: (await rf(base, 'GET', '/redfish/v1/Systems/System_0')).body.SerialNumber,
    });
    const before = await read();
    await inject('ct02', { part: 'gpu', gpu: 2 });
    const swap = await admin(t, 'POST', '/bmcs/ct02/health/swap', { part: 'gpu', gpu: 2 });
    assert.equal(swap.status, 200);
    assert.equal(swap.body.previousSerialNumber, before.gpu2);
    const after = await read();
    assert.notEqual(after.gpu2, before.gpu2);
    assert.equal(swap.body.serialNumber, after.gpu2);
    assert.equal(after.chassis2, after.gpu2);
    assert.notEqual(after.hbm2, before.hbm2);
    assert.equal(after.gpu3, before.gpu3);
    assert.equal(after.tray, before.tray);
    assert.equal((await rf(base, 'GET', gpu(2))).body.Status.Health, 'OK', 'the new GPU has no fault');
    assert.equal((await health('ct02')).gpus[2].serialNumber, after.gpu2);

    const again = await admin(t, 'POST', '/bmcs/ct02/health/swap', { part: 'gpu', gpu: 2 });
    assert.notEqual(again.body.serialNumber, after.gpu2, 'every swap is a new part');

    const cpu = await admin(t, 'POST', '/bmcs/ct02/health/swap', { part: 'cpu', cpu: 1 });
    assert.equal(
      (await rf(base, 'GET', '/redfish/v1/Systems/System_0/Processors/CPU_1')).body.SerialNumber,
      cpu.body.serialNumber,
    );
  });

  it('a tray whose host is off fails closed; the report says why', async () => {
    const report = await health('ct03');
    assert.equal(report.verdict, 'fail');
    assert.deepEqual(report.failures, ['host power is Off']);
    assert.equal(report.nvlink.up, 0);
  });

  it('refuses faults on parts the tray does not have, and part faults on BMCs that are not compute trays', async () => {
    const cases = [
      { part: 'gpu', gpu: 4 },
      { part: 'nvlink', gpu: 0, port: 18 },
      { part: 'memory', memory: 'DIMM_7' },
      { part: 'gpu', gpu: 0, health: 'Broken' },
      { part: 'psu', index: 0 },
    ];
    for (const fault of cases) {
      const res = await admin(t, 'POST', '/bmcs/ct01/health/faults', fault);
      assert.equal(res.status, 400, JSON.stringify(fault));
      assert.equal(typeof res.body.error, 'string');
    }
    assert.equal((await health('ct01')).verdict, 'pass');
    assert.equal((await admin(t, 'POST', '/bmcs/shelf/health/faults', { part: 'gpu', gpu: 0 })).status, 409);
    const shelf = await health('shelf');
    assert.equal(shelf.kind, 'power_shelf');
    assert.equal(shelf.verdict, 'pass');
  });
});

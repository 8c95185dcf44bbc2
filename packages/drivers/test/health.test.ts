import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { HealthReading, NodeType } from '@fleet/domain';
import { SiteLimiter } from '@fleet/redfish';
import { startAdminServer, startRedfishSimulator, type ProfileId, type RedfishSimulator } from '@fleet/simulators';
import { driverFor, type NodeDriver } from '../src/index.js';

// readHealth against the BMC simulator: what a healthy device costs, and what each injected fault reads as.
const credentials = { username: 'admin', password: 'sekret' };
const bmcs: { id: string; profile: ProfileId; nodeType: NodeType; powerState?: 'On' | 'Off' }[] = [
  { id: 'ct', profile: 'gb200-compute', nodeType: 'compute_gb200_nvidia', powerState: 'On' },
  { id: 'ct300', profile: 'gb300-compute', nodeType: 'compute_gb300_nvidia', powerState: 'On' },
  { id: 'ct-down', profile: 'gb200-compute', nodeType: 'compute_gb200_nvidia', powerState: 'On' },
  { id: 'switch', profile: 'nvswitch-tray', nodeType: 'switch_gb200_nvidia' },
  { id: 'shelf-liteon', profile: 'powershelf-liteon', nodeType: 'powershelf_gb200_liteon' },
  { id: 'shelf-delta', profile: 'powershelf-delta', nodeType: 'powershelf_gb300_delta' },
];
const healthy = (powerState: string): HealthReading => ({
  reachable: true,
  credentialsOk: true,
  powerState: powerState as HealthReading['powerState'],
  faults: [],
});

describe('readHealth against the simulator', () => {
  let sim: RedfishSimulator;
  let admin: { port: number; close(): Promise<void> };
  const block = `127.${randomInt(2, 250)}.${randomInt(0, 250)}`;
  const port = 20_000 + randomInt(0, 20_000);
  const open: NodeDriver[] = [];
  const driver = (id: string, opts: { password?: string; limiter?: SiteLimiter; signal?: AbortSignal } = {}) => {
    const spec = bmcs.find((b) => b.id === id)!;
    const d = driverFor(spec.nodeType)({
      target: { deviceId: id, nodeType: spec.nodeType, bmcUrl: sim.bmcUrl(id), credentialRef: 'r' },
      credentials: { ...credentials, password: opts.password ?? credentials.password },
      redfish: {
        connectTimeoutMs: 500,
        requestTimeoutMs: 500,
        ...(opts.limiter ? { siteLimiter: opts.limiter } : {}),
      },
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    open.push(d);
    return d;
  };
  /** The reading, and the requests the BMC served for it (method and path). */
  const observe = async (d: NodeDriver, id: string) => {
    sim.bmc(id).clearLog();
    const reading = await d.readHealth();
    return { reading, requests: sim.bmc(id).log.map((r) => `${r.method} ${r.path}`) };
  };
  const faults = async (method: string, id: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${admin.port}/bmcs/${id}/health/faults`, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    assert.ok(res.ok, `${method} faults on ${id}: ${res.status} ${await res.text()}`);
  };
  const unresponsive = async (id: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${admin.port}/bmcs/${id}/health/unresponsive`, {
      method: body === undefined ? 'DELETE' : 'PUT',
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    assert.ok(res.ok, `unresponsive on ${id}: ${res.status}`);
  };

  before(async () => {
    sim = await startRedfishSimulator({
      bmcs: bmcs.map((b, i) => ({
        id: b.id,
        profile: b.profile,
        address: `${block}.${i + 1}`,
        port,
        ...credentials,
        ...(b.powerState ? { powerState: b.powerState } : {}),
      })),
      timeScale: 0.01,
    });
    admin = await startAdminServer(
      sim,
      bmcs.map((b) => b.id),
      '127.0.0.1',
      0,
    );
  });
  after(async () => {
    await Promise.all(open.map((d) => d.close()));
    await admin.close();
    await sim.close();
  });
  beforeEach(async () => {
    for (const id of ['ct', 'ct300', 'shelf-liteon', 'shelf-delta']) await faults('DELETE', id);
  });

  it('a healthy compute tray: no faults, and two GETs (its system and its chassis) once discovered', async () => {
    const tray = driver('ct');
    const cold = await observe(tray, 'ct');
    assert.deepEqual(cold.reading, healthy('On'));
    assert.deepEqual(cold.requests, [
      'GET /redfish/v1',
      'GET /redfish/v1/Systems',
      'GET /redfish/v1/Systems/System_0',
      'GET /redfish/v1/Chassis',
      'GET /redfish/v1/Chassis/BMC_0',
    ]);
    const warm = await observe(tray, 'ct');
    assert.deepEqual(warm.reading, healthy('On'));
    assert.deepEqual(warm.requests, ['GET /redfish/v1/Systems/System_0', 'GET /redfish/v1/Chassis/BMC_0']);
  });

  it('a healthy switch tray and power shelves: two GETs, one on a shelf (its chassis has the power)', async () => {
    const sw = driver('switch');
    await sw.readHealth();
    const s = await observe(sw, 'switch');
    assert.deepEqual(s.reading, healthy('Off'));
    assert.deepEqual(s.requests, ['GET /redfish/v1/Systems/System_0', 'GET /redfish/v1/Chassis/BMC_0']);
    for (const id of ['shelf-liteon', 'shelf-delta']) {
      const shelf = driver(id);
      assert.deepEqual(await shelf.readHealth(), healthy('On'));
      const warm = await observe(shelf, id);
      assert.deepEqual(warm.reading, healthy('On'));
      assert.deepEqual(warm.requests, ['GET /redfish/v1/Chassis/powershelf']);
    }
  });

  it('a GPU off the bus is one Critical gpu fault naming it (its chassis is the same part, no second)', async () => {
    const tray = driver('ct');
    await tray.readHealth();
    await faults('POST', 'ct', { part: 'gpu', gpu: 1, offBus: true });
    const { reading, requests } = await observe(tray, 'ct');
    assert.equal(reading.reachable, true);
    assert.equal(reading.powerState, 'On');
    assert.deepEqual(
      reading.faults.map((f) => [f.class, f.component, f.severity]),
      [['gpu', 'GPU_1', 'Critical']],
    );
    assert.match(reading.faults[0]!.message, /fell off the bus/);
    // Down only where a rollup is not OK: the HGX zone's chassis and the GPUs, not a healthy part's sensors or ports.
    assert.ok(requests.includes('GET /redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_1'));
    assert.ok(requests.includes('GET /redfish/v1/Chassis/HGX_GPU_1/ThermalSubsystem'));
    assert.ok(!requests.some((r) => /HGX_GPU_0\/|\/Ports|\/Memory|System_0\/Processors/.test(r)), String(requests));

    await faults('DELETE', 'ct');
    const back = await observe(tray, 'ct');
    assert.deepEqual(back.reading, healthy('On'));
    assert.equal(back.requests.length, 2);
  });

  it('a GPU with a degraded NVLink or HBM is a Warning on that GPU, naming the memory device', async () => {
    const tray = driver('ct300');
    await faults('PUT', 'ct300', {
      faults: [
        { part: 'nvlink', gpu: 3, port: 7, health: 'Warning', reason: 'replay errors' },
        { part: 'memory', memory: 'GPU_0_DRAM_0', health: 'Warning', reason: 'row remap pending' },
      ],
    });
    const { faults: found } = await tray.readHealth();
    assert.deepEqual(
      found.map((f) => [f.class, f.component, f.severity]),
      [
        ['gpu', 'GPU_0', 'Warning'],
        ['gpu', 'GPU_3', 'Warning'],
      ],
    );
    assert.match(found[0]!.message, /GPU_0_DRAM_0 is Warning \(.*row remap pending/);
    assert.match(found[1]!.message, /NVLink/);
  });

  it('a memory fault on a Grace CPU is a chassis fault on that CPU', async () => {
    await faults('POST', 'ct', { part: 'memory', memory: 'ProcessorModule_1_Memory_0' });
    const { faults: found } = await driver('ct').readHealth();
    assert.deepEqual(
      found.map((f) => [f.class, f.component, f.severity]),
      [['chassis', 'CPU_1', 'Critical']],
    );
    assert.match(found[0]!.message, /ProcessorModule_1_Memory_0 is Critical/);
  });

  it('a leak on a compute tray is a Critical leak fault on that detector, whatever its grade', async () => {
    const tray = driver('ct');
    await tray.readHealth();
    await faults('POST', 'ct', { part: 'leak', detector: 1, health: 'Warning', reason: 'moisture' });
    const { reading, requests } = await observe(tray, 'ct');
    assert.deepEqual(reading.faults, [
      {
        class: 'leak',
        component: 'LeakDetector_1',
        severity: 'Critical',
        message: 'GPU Cold Plate Leak Detector: DetectorState Warning',
      },
    ]);
    assert.ok(requests.includes('GET /redfish/v1/Chassis/BMC_0/ThermalSubsystem/LeakDetection/LeakDetectors'));
    assert.ok(!requests.some((r) => /HGX_GPU|Processors/.test(r)), 'the healthy HGX zone is not entered');
  });

  it('a temperature past its threshold is a thermal fault of that grade, on a tray and on a shelf', async () => {
    await faults('POST', 'ct', { part: 'thermal', sensor: 'TEMP_INLET', health: 'Warning' });
    const tray = await driver('ct').readHealth();
    assert.deepEqual(
      tray.faults.map((f) => [f.class, f.component, f.severity]),
      [['thermal', 'TEMP_INLET', 'Warning']],
    );
    assert.match(tray.faults[0]!.message, /^TEMP_INLET reads 42\.5 °C, past its UpperCaution threshold$/);
    await faults('POST', 'shelf-delta', { part: 'thermal', sensor: 'PSU_2_Temp_0' });
    const shelf = await driver('shelf-delta').readHealth();
    assert.deepEqual(
      shelf.faults.map((f) => [f.class, f.component, f.severity]),
      [['thermal', 'PSU_2_Temp_0', 'Critical']],
    );
  });

  for (const id of ['shelf-liteon', 'shelf-delta']) {
    it(`${id}: a failed PSU is a psu fault naming it, with the BMC's reason`, async () => {
      const shelf = driver(id);
      await shelf.readHealth();
      await faults('POST', id, { part: 'psu', psu: 3, reason: 'output overcurrent' });
      const { reading, requests } = await observe(shelf, id);
      assert.deepEqual(reading.faults.length, 1);
      assert.deepEqual(
        [reading.faults[0]!.class, reading.faults[0]!.component, reading.faults[0]!.severity],
        ['psu', 'PSU_3', 'Critical'],
      );
      assert.match(reading.faults[0]!.message, /output overcurrent/);
      assert.equal(reading.powerState, 'On');
      const supplies = '/redfish/v1/Chassis/powershelf/PowerSubsystem/PowerSupplies';
      assert.deepEqual(requests, [
        'GET /redfish/v1/Chassis/powershelf',
        'GET /redfish/v1/Chassis/powershelf/ThermalSubsystem',
        'GET /redfish/v1/Chassis/powershelf/PowerSubsystem',
        `GET ${supplies}`,
        ...[0, 1, 2, 3, 4, 5].map((i) => `GET ${supplies}/PSU_${i}`),
      ]);
      await faults('POST', id, { part: 'psu', psu: 0, health: 'Warning', reason: 'fan degraded' });
      assert.deepEqual(
        (await shelf.readHealth()).faults.map((f) => [f.component, f.severity]),
        [
          ['PSU_0', 'Warning'],
          ['PSU_3', 'Critical'],
        ],
      );
    });
  }

  it('a BMC that stops answering (timeout or reset) or is not there reads unreachable, not an error', async () => {
    const tray = driver('ct-down');
    await tray.readHealth();
    for (const mode of ['timeout', 'reset']) {
      await unresponsive('ct-down', { mode });
      const reading = await tray.readHealth();
      assert.equal(reading.reachable, false, mode);
      assert.equal(reading.credentialsOk, undefined);
      assert.equal(reading.powerState, undefined);
      assert.deepEqual(
        reading.faults.map((f) => [f.class, f.component, f.severity]),
        [['unreachable', 'bmc', 'Critical']],
      );
      assert.match(reading.faults[0]!.message, mode === 'timeout' ? /^Timeout: / : /^Unavailable: /);
    }
    await unresponsive('ct-down');
    assert.deepEqual(await tray.readHealth(), healthy('On'));

    const nowhere = driverFor('compute_gb200_nvidia')({
      target: {
        deviceId: 'gone',
        nodeType: 'compute_gb200_nvidia',
        bmcUrl: `http://${block}.250:${port}`,
        credentialRef: 'r',
      },
      credentials,
      redfish: { connectTimeoutMs: 500, requestTimeoutMs: 500 },
    });
    open.push(nowhere);
    assert.equal((await nowhere.readHealth()).faults[0]!.class, 'unreachable');
  });

  it('a wrong password reads as credentials refused', async () => {
    const reading = await driver('switch', { password: 'wrong' }).readHealth();
    assert.equal(reading.reachable, true);
    assert.equal(reading.credentialsOk, false);
    assert.deepEqual(
      reading.faults.map((f) => [f.class, f.component, f.severity]),
      [['credentials', 'bmc', 'Critical']],
    );
    assert.match(reading.faults[0]!.message, /^Unauthenticated: /);
  });

  it('waits for a slot of the site limiter, and a cancelled read throws rather than reading', async () => {
    const limiter = new SiteLimiter(1);
    const release = await limiter.acquire();
    sim.bmc('shelf-delta').clearLog();
    let done = false;
    const pending = driver('shelf-delta', { limiter })
      .readHealth()
      .then((r) => ((done = true), r));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(done, false);
    assert.equal(sim.bmc('shelf-delta').log.length, 0, 'nothing sent while the site is full');
    release();
    assert.deepEqual(await pending, healthy('On'));

    const controller = new AbortController();
    const reason = new Error('observer stopped');
    controller.abort(reason);
    await assert.rejects(driver('ct', { signal: controller.signal }).readHealth(), (e) => e === reason);
  });
});

import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  hardwareOf,
  nodeTypes,
  powerActions,
  type BmcTarget,
  type NodeType,
  type PowerAction,
  type RedfishResetType,
} from '@fleet/domain';
import { RedfishError, ResetTypeNotAllowedError, SystemSelectionError } from '@fleet/redfish';
import { startRedfishSimulator, type BmcSpec, type ProfileId, type RedfishSimulator } from '@fleet/simulators';
import { driverFor, UnsupportedNodeTypeError, UnsupportedOperationError, type NodeDriver } from '../src/index.js';

const credentials = { username: 'admin', password: 'sekret' };

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('driver registry', () => {
  it('every node type in the hardware table resolves to a driver of its kind, with its controllers', () => {
    const target: BmcTarget = { deviceId: 'x', nodeType: 'x', bmcUrl: 'http://127.0.0.1:1', credentialRef: 'r' };
    for (const nodeType of nodeTypes) {
      const hardware = hardwareOf(nodeType)!;
      const driver = driverFor(nodeType)({ target: { ...target, nodeType }, credentials });
      assert.equal(driver.nodeType, nodeType);
      assert.equal(driver.kind, hardware.kind, nodeType);
      assert.deepEqual(driver.managers, hardware.managers, nodeType);
    }
  });

  it('an unknown node type is a typed error', () => {
    assert.throws(
      () => driverFor('compute_gb200_wiwynn'),
      (e: unknown) => e instanceof UnsupportedNodeTypeError && e.nodeType === 'compute_gb200_wiwynn',
    );
  });

  it('maps fleet power actions per node kind: a shelf cuts or restores its output, trays follow RMS', () => {
    const target: BmcTarget = { deviceId: 'x', nodeType: 'x', bmcUrl: 'http://127.0.0.1:1', credentialRef: 'r' };
    const shelf = driverFor('powershelf_gb200_liteon')({ target, credentials });
    const tray = driverFor('compute_gb200_nvidia')({ target, credentials });
    const expectShelf: Record<PowerAction, RedfishResetType | null> = {
      on: 'On',
      'force-on': 'On',
      off: 'ForceOff',
      'force-off': 'ForceOff',
      'power-cycle': 'PowerCycle',
      'force-restart': 'PowerCycle',
      'graceful-shutdown': null,
      'graceful-restart': null,
    };
    for (const action of powerActions) {
      const want = expectShelf[action];
      if (want) assert.equal(shelf.resetTypeFor(action), want, action);
      else assert.throws(() => shelf.resetTypeFor(action), UnsupportedOperationError, action);
    }
    assert.deepEqual(shelf.resetTypes, ['On', 'ForceOff', 'PowerCycle']);
    assert.equal(tray.resetTypeFor('off'), 'GracefulShutdown');
  });
});

describe('drivers against the simulator', () => {
  let sim: RedfishSimulator;
  const block = `127.${randomInt(2, 250)}.${randomInt(0, 250)}`;
  const port = 20_000 + randomInt(0, 20_000);
  const bmcs: { id: string; profile: ProfileId; nodeType: NodeType; quirks?: BmcSpec['quirks'] }[] = [
    { id: 'shelf-liteon', profile: 'powershelf-liteon', nodeType: 'powershelf_gb200_liteon' },
    { id: 'shelf-delta', profile: 'powershelf-delta', nodeType: 'powershelf_gb300_delta' },
    { id: 'switch', profile: 'nvswitch-tray', nodeType: 'switch_gb200_nvidia' },
    { id: 'compute-bmc', profile: 'gb300-compute', nodeType: 'compute_gb300_nvidia' },
    { id: 'compute-hmc', profile: 'gb200-compute', nodeType: 'compute_gb200_nvidia' },
    // A shelf BMC that, like NVIDIA's BlueField and GH200 BMCs, lists its reset types only in the ActionInfo.
    {
      id: 'shelf-actioninfo',
      profile: 'powershelf-liteon',
      nodeType: 'powershelf_gb200_liteon',
      quirks: { resetTypesInActionInfoOnly: true, resetTypes: ['On', 'PowerCycle'] },
    },
    // A bladed enclosure: a second host system beside System_0 (and the HGX baseboard).
    {
      id: 'blades',
      profile: 'gb200-compute',
      nodeType: 'compute_gb200_nvidia',
      quirks: { extraSystems: ['System_1'] },
    },
  ];
  const open: NodeDriver[] = [];
  const driver = (id: string, password = credentials.password, redfishSystemId?: string): NodeDriver => {
    const spec = bmcs.find((b) => b.id === id)!;
    const d = driverFor(spec.nodeType)({
      target: {
        deviceId: id,
        nodeType: spec.nodeType,
        bmcUrl: sim.bmcUrl(id),
        credentialRef: 'r',
        ...(redfishSystemId ? { redfishSystemId } : {}),
      },
      credentials: { ...credentials, password },
      redfish: { connectTimeoutMs: 1_000, requestTimeoutMs: 2_000 },
    });
    open.push(d);
    return d;
  };
  const posts = (id: string) => sim.bmc(id).log.filter((r) => r.method === 'POST');

  before(async () => {
    sim = await startRedfishSimulator({
      bmcs: bmcs.map((b, i) => ({
        id: b.id,
        profile: b.profile,
        address: `${block}.${i + 1}`,
        port,
        ...credentials,
        ...(b.quirks ? { quirks: b.quirks } : {}),
      })),
      timeScale: 0.01,
    });
  });
  after(async () => {
    await Promise.all(open.map((d) => d.close()));
    await sim.close();
  });

  for (const id of ['shelf-liteon', 'shelf-delta']) {
    it(`${id}: off and on through Chassis.Reset on chassis powershelf; the PMC stays reachable`, async () => {
      const shelf = driver(id);
      assert.equal(await shelf.powerState(), 'On');
      await shelf.reset(shelf.resetTypeFor('off'));
      assert.equal(await shelf.powerState(), 'Off');
      assert.deepEqual(await shelf.probe(), { reachable: true, powerState: 'Off' });
      await shelf.reset(shelf.resetTypeFor('on'));
      assert.equal(
        await until(
          () => shelf.powerState(),
          (s) => s === 'On',
        ),
        'On',
      );
      assert.deepEqual(
        posts(id).map((r) => [r.path, r.body]),
        [
          ['/redfish/v1/Chassis/powershelf/Actions/Chassis.Reset', { ResetType: 'ForceOff' }],
          ['/redfish/v1/Chassis/powershelf/Actions/Chassis.Reset', { ResetType: 'On' }],
        ],
      );
    });
  }

  it('a shelf refuses what it cannot do before anything reaches the wire', async () => {
    const shelf = driver('shelf-liteon');
    const before = posts('shelf-liteon').length;
    await assert.rejects(shelf.reset('GracefulShutdown'), UnsupportedOperationError);
    await assert.rejects(
      shelf.resetManager('hmc'),
      (e: unknown) => e instanceof UnsupportedOperationError && /HMC/.test(e.message),
    );
    await assert.rejects(shelf.probeManager('hmc'), UnsupportedOperationError);
    assert.equal(posts('shelf-liteon').length, before);
  });

  it(`a shelf whose reset types are only in its ActionInfo: off (ForceOff) is refused, typed, before any POST; \
PowerCycle goes`, async () => {
    const shelf = driver('shelf-actioninfo');
    const err = await shelf.reset(shelf.resetTypeFor('off')).catch((e: unknown) => e);
    assert.ok(err instanceof ResetTypeNotAllowedError, String(err));
    assert.deepEqual(
      [err.device, err.uri, err.resetType, err.allowed],
      ['shelf-actioninfo', '/redfish/v1/Chassis/powershelf/Actions/Chassis.Reset', 'ForceOff', ['On', 'PowerCycle']],
    );
    assert.equal(posts('shelf-actioninfo').length, 0);
    await shelf.reset(shelf.resetTypeFor('power-cycle'));
    assert.deepEqual(
      posts('shelf-actioninfo').map((r) => r.body),
      [{ ResetType: 'PowerCycle' }],
    );
  });

  it(`several host systems: a device naming none is refused with the members listed; one naming its system is powered \
there`, async () => {
    const unnamed = driver('blades');
    const err = await unnamed.reset('On').catch((e: unknown) => e);
    assert.ok(err instanceof SystemSelectionError, String(err));
    assert.deepEqual(err.members, [
      '/redfish/v1/Systems/System_0',
      '/redfish/v1/Systems/HGX_Baseboard_0',
      '/redfish/v1/Systems/System_1',
    ]);
    assert.match(
      err.message,
      /device blades: the BMC has several systems \(System_0, HGX_Baseboard_0, System_1\) and the device names none/,
    );
    await assert.rejects(unnamed.powerState(), SystemSelectionError);
    await assert.rejects(
      driver('blades', credentials.password, 'System_9').powerState(),
      (e: unknown) => e instanceof SystemSelectionError && e.code === 'NotFound' && e.requested === 'System_9',
    );
    assert.equal(posts('blades').length, 0);
    const named = driver('blades', credentials.password, 'System_0');
    await named.reset('On');
    assert.equal(
      await until(
        () => named.powerState(),
        (s) => s === 'On',
      ),
      'On',
    );
    assert.deepEqual(
      posts('blades').map((r) => r.path),
      ['/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset'],
    );
  });

  it('switch tray: on through ComputerSystem.Reset on System_0', async () => {
    const sw = driver('switch');
    assert.equal(await sw.powerState(), 'Off');
    await sw.reset(sw.resetTypeFor('on'));
    assert.equal(
      await until(
        () => sw.powerState(),
        (s) => s === 'On',
      ),
      'On',
    );
    assert.deepEqual(
      posts('switch').map((r) => [r.path, r.body]),
      [['/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset', { ResetType: 'On' }]],
    );
    await assert.rejects(sw.resetManager('hmc'), UnsupportedOperationError);
  });

  it('compute BMC: Manager.Reset on BMC_0; a rebooting BMC probes unreachable (503) until it is back', async () => {
    const tray = driver('compute-bmc');
    assert.equal((await tray.probe()).reachable, true);
    await tray.resetManager('bmc');
    const down = await until(
      () => tray.probe(),
      (p) => !p.reachable,
      1_000,
    );
    assert.equal(down.reachable, false);
    // One attempt: the BMC's Retry-After (minutes on real hardware) is not waited out inside a probe.
    assert.match(down.reachable ? '' : down.reason, /^Unavailable: .*temporarily unavailable/);
    assert.equal((await tray.probeManager('bmc')).reachable, false);
    assert.deepEqual(
      await until(
        () => tray.probe(),
        (p) => p.reachable,
      ),
      { reachable: true, powerState: 'Off' },
    );
    assert.deepEqual(
      posts('compute-bmc').map((r) => [r.path, r.body]),
      [['/redfish/v1/Managers/BMC_0/Actions/Manager.Reset', { ResetType: 'GracefulRestart' }]],
    );
  });

  it('compute HMC: Manager.Reset on HGX_BMC_0, then its manager resource answers again', async () => {
    const tray = driver('compute-hmc');
    await tray.resetManager('hmc');
    assert.equal(
      (
        await until(
          () => tray.probeManager('hmc'),
          (p) => !p.reachable,
          1_000,
        )
      ).reachable,
      false,
    );
    assert.deepEqual(
      await until(
        () => tray.probeManager('hmc'),
        (p) => p.reachable,
      ),
      { reachable: true },
    );
    assert.deepEqual(
      posts('compute-hmc').map((r) => r.path),
      ['/redfish/v1/Managers/HGX_BMC_0/Actions/Manager.Reset'],
    );
  });

  it('probe: nothing listening is unreachable; wrong credentials are an error, not "unreachable"', async () => {
    const nowhere = driverFor('compute_gb200_nvidia')({
      target: {
        deviceId: 'gone',
        nodeType: 'compute_gb200_nvidia',
        bmcUrl: `http://${block}.250:${port}`,
        credentialRef: 'r',
      },
      credentials,
      redfish: { connectTimeoutMs: 500, requestTimeoutMs: 1_000 },
    });
    open.push(nowhere);
    const p = await nowhere.probe();
    assert.equal(p.reachable, false);
    await assert.rejects(
      driver('switch', 'wrong').probe(),
      (e: unknown) => e instanceof RedfishError && e.code === 'Unauthenticated',
    );
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  getFirmwareInventory,
  getPowerState,
  getPowerSubsystem,
  getUpdateService,
  listChassis,
  RedfishClient,
  readCollection,
  resetChassis,
  resetManager,
  resetSystem,
  ResetTypeNotAllowedError,
  SystemSelectionError,
} from '../src/index.js';
import {
  credentials,
  extractGh200,
  json,
  mockups,
  serve,
  staticRedfish,
  type Handler,
  type TestServer,
} from './helpers/servers.js';

// Golden facts from shared/reference/test-peers.md, against captures served as they were recorded.

describe('NVIDIA GH200 capture (long form)', () => {
  let capture: ReturnType<typeof extractGh200>;
  let server: TestServer;
  let client: RedfishClient;
  before(async () => {
    capture = extractGh200();
    server = await serve(staticRedfish(capture.root));
    client = new RedfishClient({ baseUrl: server.url, credentials });
  });
  after(async () => {
    await client.close();
    await server.close();
    capture.cleanup();
  });

  it('de-duplicates the firmware inventory to 19 components and reports the duplicate', async () => {
    const inv = await getFirmwareInventory(client);
    assert.equal(inv.components.length, 19);
    assert.equal(new Set(inv.components.map((c) => c.id)).size, 19);
    assert.ok(
      inv.warnings.some((w) => w.includes('HGX_FW_FPGA_0') && w.includes('more than once')),
      inv.warnings.join('\n'),
    );
    const bmc = inv.components.find((c) => c.id === 'FW_BMC_0');
    assert.equal(bmc?.version, 'GH200-24.05-2');
    assert.equal(bmc?.updateable, true);
    assert.deepEqual(bmc?.relatedItems, ['/redfish/v1/Chassis/BMC_0']);
  });

  it('finds the multipart push URI and image size limit through the UpdateService', async () => {
    const svc = await getUpdateService(client);
    assert.equal(svc.multipartHttpPushUri, '/redfish/v1/UpdateService/update-multipart');
    assert.equal(svc.maxImageSizeBytes, 209715200);
  });

  it('lists 23 chassis including HGX_Chassis_0', async () => {
    const { chassis, warnings } = await listChassis(client);
    assert.equal(chassis.length, 23);
    assert.deepEqual(warnings, []);
    const hgx = chassis.find((c) => c.id === 'HGX_Chassis_0');
    assert.equal(hgx?.powerSubsystemUri, '/redfish/v1/Chassis/HGX_Chassis_0/PowerSubsystem');
  });

  it('only ever asked for the service root by path; everything else came from links', () => {
    const paths = server.requests.map((r) => r.path);
    assert.equal(paths[0], '/redfish/v1');
    assert.equal(
      server.requests.filter((r) => r.path.replace(/\/$/, '') === '/redfish/v1').length,
      1,
      'root read once and cached',
    );
  });
});

describe('NVIDIA GH200 capture: reset types from ActionInfo, several systems', () => {
  let capture: ReturnType<typeof extractGh200>;
  let server: TestServer;
  let client: RedfishClient;
  before(async () => {
    capture = extractGh200();
    server = await serve(staticRedfish(capture.root));
    client = new RedfishClient({ baseUrl: server.url, credentials });
  });
  after(async () => {
    await client.close();
    await server.close();
    capture.cleanup();
  });

  // NVIDIA's OpenBMC (this capture, and BlueField BMCs) lists reset types only in @Redfish.ActionInfo.
  it(`Chassis.Reset: a ResetType only the ActionInfo rules out is refused, naming device, URI and allowed values, \
before any POST`, async () => {
    const named = new RedfishClient({ baseUrl: server.url, credentials, device: 'tray-07' });
    try {
      const err = await resetChassis(named, 'BMC_0', 'ForceOff').catch((e: unknown) => e);
      assert.ok(err instanceof ResetTypeNotAllowedError, String(err));
      assert.deepEqual(err.allowed, ['PowerCycle']);
      assert.equal(err.uri, '/redfish/v1/Chassis/BMC_0/Actions/Chassis.Reset');
      assert.equal(err.code, 'InvalidArgument');
      assert.match(err.message, /device tray-07: ResetType ForceOff not allowed \(allowed: PowerCycle\)/);
    } finally {
      await named.close();
    }
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 0);
  });

  it(`ComputerSystem.Reset and Manager.Reset read the same ActionInfo helper, each ActionInfo once per \
client`, async () => {
    await assert.rejects(
      resetSystem(client, 'Nmi'),
      (e: unknown) =>
        e instanceof ResetTypeNotAllowedError && e.allowed.includes('PowerCycle') && !e.allowed.includes('Nmi'),
    );
    await assert.rejects(resetSystem(client, 'Nmi'), ResetTypeNotAllowedError);
    await assert.rejects(
      resetManager(client, 'bmc', 'ForceOff'),
      (e: unknown) =>
        e instanceof ResetTypeNotAllowedError && e.allowed.join() === 'GracefulRestart,ForceRestart,GracefulShutdown',
    );
    assert.equal(server.requests.filter((r) => r.path === '/redfish/v1/Systems/System_0/ResetActionInfo').length, 1);
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 0);
  });

  it(`System_0 and HGX_Baseboard_0: the GPU baseboard never makes the tray ambiguous; a named system must \
exist`, async () => {
    assert.equal(await getPowerState(client), 'On');
    assert.equal(await getPowerState(client, 'HGX_Baseboard_0'), 'On');
    const err = await getPowerState(client, 'System_3').catch((e: unknown) => e);
    assert.ok(err instanceof SystemSelectionError, String(err));
    assert.equal(err.code, 'NotFound');
    assert.deepEqual(err.members, ['/redfish/v1/Systems/System_0', '/redfish/v1/Systems/HGX_Baseboard_0']);
    assert.match(err.message, /no system System_3 \(the BMC lists: System_0, HGX_Baseboard_0\)/);
  });
});

describe('DMTF public-rackmount1 (short form)', () => {
  let server: TestServer;
  let client: RedfishClient;
  before(async () => {
    server = await serve(staticRedfish(join(mockups, 'public-rackmount1')));
    client = new RedfishClient({ baseUrl: server.url, credentials });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('reads 3 firmware entries and the SimpleUpdate target', async () => {
    const inv = await getFirmwareInventory(client);
    assert.deepEqual(inv.components.map((c) => c.id).sort(), ['BIOS', 'BMC', 'SS']);
    // Upstream declares Members@odata.count 2 next to three members: reported, not fatal.
    assert.deepEqual(inv.warnings, [
      '/redfish/v1/UpdateService/FirmwareInventory: Members@odata.count is 2 but 3 distinct members are ' +
        'listed (3 entries)',
    ]);
    const svc = await getUpdateService(client);
    assert.equal(svc.simpleUpdateTarget, '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate');
    assert.equal(svc.multipartHttpPushUri, undefined);
  });

  it('one system and none named: the device is that system', async () => {
    assert.equal(await getPowerState(client), 'On');
  });

  it('has a TaskService linked from the root', async () => {
    const root = await client.root();
    assert.equal(root.Tasks?.['@odata.id'], '/redfish/v1/TaskService');
  });
});

describe('DMTF public-power-shelf (short form)', () => {
  let server: TestServer;
  let client: RedfishClient;
  before(async () => {
    server = await serve(staticRedfish(join(mockups, 'public-power-shelf')));
    client = new RedfishClient({ baseUrl: server.url, credentials });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('reads the PowerSubsystem: 5 distinct PSUs, duplicate Bay3 and the count mismatch flagged', async () => {
    const ps = await getPowerSubsystem(client, 'PowerShelf');
    assert.equal(ps.capacityWatts, 12000);
    assert.deepEqual(
      ps.powerSupplies.map((p) => p.id),
      ['Bay1', 'Bay3', 'Bay4', 'Bay5', 'Bay6'],
    );
    assert.equal(ps.powerSupplies[0]?.model, 'RKS-440DC');
    assert.equal(ps.warnings.length, 3, ps.warnings.join('\n'));
    assert.ok(
      ps.warnings.some((w) =>
        w.includes('PowerSubsystem link /redfish/v1/Chassis/PowerShelf/Sensors is a #SensorCollection'),
      ),
    );
    assert.ok(ps.warnings.some((w) => w.includes('/Bay3 listed more than once')));
    assert.ok(ps.warnings.some((w) => w.includes('Members@odata.count is 6 but 5 distinct')));
  });

  it('reads collections whose links carry a trailing slash', async () => {
    const { members } = await readCollection(client, '/redfish/v1/Chassis/');
    assert.deepEqual(members, ['/redfish/v1/Chassis/PowerShelf']);
  });
});

/** A BMC older than PowerSubsystem (2020.4): the rackmount1 chassis without its PowerSubsystem link. */
function withoutPowerSubsystem(inner: Handler): Handler {
  return async (req, res, path) => {
    if (path !== '/redfish/v1/Chassis/1U') return inner(req, res, path);
    const { PowerSubsystem: _gone, ...chassis } = JSON.parse(
      readFileSync(join(mockups, 'public-rackmount1', 'Chassis', '1U', 'index.json'), 'utf8'),
    ) as Record<string, unknown>;
    json(res, 200, chassis);
  };
}

describe('DMTF public-rackmount1 with only the older Power resource', () => {
  let server: TestServer;
  let client: RedfishClient;
  before(async () => {
    server = await serve(withoutPowerSubsystem(staticRedfish(join(mockups, 'public-rackmount1'))));
    client = new RedfishClient({ baseUrl: server.url, credentials });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('reads PowerSupplies and PowerControl from Power where PowerSubsystem is absent', async () => {
    const ps = await getPowerSubsystem(client, '1U');
    assert.equal(ps.source, 'Power');
    assert.equal(ps.uri, '/redfish/v1/Chassis/1U/Power');
    assert.equal(ps.capacityWatts, 800);
    assert.equal(ps.consumedWatts, 344);
    assert.deepEqual(
      ps.powerSupplies.map((p) => [
        p.id,
        p.model,
        p.serialNumber,
        p.firmwareVersion,
        p.powerCapacityWatts,
        p.status?.Health,
      ]),
      [['0', '499253-B21', '1Z0000001', '1.00', 800, 'Warning']],
    );
    assert.deepEqual(ps.warnings, []);
    const { chassis } = await listChassis(client);
    assert.equal(chassis[0]?.powerUri, '/redfish/v1/Chassis/1U/Power');
  });
});

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getFirmwareInventory, getPowerSubsystem, getUpdateService, listChassis, RedfishClient, readCollection } from '../src/index.js';
import { credentials, extractGh200, mockups, serve, staticRedfish, type TestServer } from './helpers/servers.js';

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
    assert.ok(inv.warnings.some((w) => w.includes('HGX_FW_FPGA_0') && w.includes('more than once')), inv.warnings.join('\n'));
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
    assert.equal(server.requests.filter((r) => r.path.replace(/\/$/, '') === '/redfish/v1').length, 1, 'root read once and cached');
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
    assert.deepEqual(inv.warnings, ['/redfish/v1/UpdateService/FirmwareInventory: Members@odata.count is 2 but 3 distinct members are listed (3 entries)']);
    const svc = await getUpdateService(client);
    assert.equal(svc.simpleUpdateTarget, '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate');
    assert.equal(svc.multipartHttpPushUri, undefined);
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
    assert.deepEqual(ps.powerSupplies.map((p) => p.id), ['Bay1', 'Bay3', 'Bay4', 'Bay5', 'Bay6']);
    assert.equal(ps.powerSupplies[0]?.model, 'RKS-440DC');
    assert.equal(ps.warnings.length, 3, ps.warnings.join('\n'));
    assert.ok(ps.warnings.some((w) => w.includes('PowerSubsystem link /redfish/v1/Chassis/PowerShelf/Sensors is a #SensorCollection')));
    assert.ok(ps.warnings.some((w) => w.includes('/Bay3 listed more than once')));
    assert.ok(ps.warnings.some((w) => w.includes('Members@odata.count is 6 but 5 distinct')));
  });

  it('reads collections whose links carry a trailing slash', async () => {
    const { members } = await readCollection(client, '/redfish/v1/Chassis/');
    assert.deepEqual(members, ['/redfish/v1/Chassis/PowerShelf']);
  });
});

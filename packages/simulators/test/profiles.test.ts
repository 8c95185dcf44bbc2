import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { profileIds, profiles } from '../src/redfish/profiles/index.js';
import { rf, startSim, type TestSim } from './helpers.js';

/** Every @odata.id reachable from the service root, with its body. */
async function walk(base: string): Promise<Map<string, Record<string, unknown>>> {
  const seen = new Map<string, Record<string, unknown>>();
  const queue = ['/redfish/v1'];
  while (queue.length > 0) {
    const path = queue.shift()!;
    if (seen.has(path)) continue;
    const res = await rf(base, 'GET', path);
    assert.equal(res.status, 200, `GET ${path}`);
    assert.equal(res.body['@odata.id'], path, `@odata.id of ${path}`);
    seen.set(path, res.body);
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') {
        for (const [k, child] of Object.entries(v)) {
          if (k === '@odata.id' && typeof child === 'string' && child !== path && !child.includes('#'))
            queue.push(child);
          else visit(child);
        }
      }
    };
    visit(res.body);
  }
  return seen;
}

describe('profiles', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim(profileIds.map((p) => ({ id: p, profile: p })));
  });
  after(() => t.close());

  for (const id of profileIds) {
    it(`${id}: every link resolves and collections count their members`, async () => {
      const tree = await walk(t.url(id));
      for (const [path, body] of tree) {
        if (!('Members' in body)) continue;
        assert.equal(body['Members@odata.count'], (body['Members'] as unknown[]).length, path);
      }
      const inventory = tree.get('/redfish/v1/UpdateService/FirmwareInventory')!;
      assert.equal(inventory['Members@odata.count'], profiles[id].firmware.length);
      const update = tree.get('/redfish/v1/UpdateService')!;
      assert.equal(update['MultipartHttpPushUri'], '/redfish/v1/UpdateService/update-multipart');
      for (const f of profiles[id].firmware) {
        const item = tree.get(`/redfish/v1/UpdateService/FirmwareInventory/${f.id}`)!;
        assert.deepEqual(item['RelatedItem'], [{ '@odata.id': f.related }]);
        assert.ok(tree.has(f.related), `${f.id} RelatedItem ${f.related} is part of the tree`);
      }
    });
  }

  for (const id of ['gb200-compute', 'gb300-compute'] as const) {
    it(`${id}: compute tray layout and MNNVLink topology`, async () => {
      const base = t.url(id);
      const tree = await walk(base);
      for (const p of [
        '/redfish/v1/Systems/System_0',
        '/redfish/v1/Managers/BMC_0',
        '/redfish/v1/Managers/HGX_BMC_0',
        '/redfish/v1/Chassis/HGX_Chassis_0',
        '/redfish/v1/Chassis/BMC_0',
        '/redfish/v1/Chassis/CBC_0',
      ]) {
        assert.ok(tree.has(p), p);
      }
      const inventory = [...tree.keys()]
        .filter((p) => p.startsWith('/redfish/v1/UpdateService/FirmwareInventory/'))
        .map((p) => p.split('/').pop());
      assert.ok(inventory.includes('FW_BMC_0') && inventory.includes('FW_ERoT_BMC_0'));
      assert.equal(inventory.filter((i) => i!.startsWith('HGX_FW_')).length, 15);
      const gpus = [...tree.entries()].filter(([p]) => /\/Processors\/GPU_\d$/.test(p));
      assert.equal(gpus.length, 4);
      for (const [, gpu] of gpus) {
        const topo = (gpu['Oem'] as { Nvidia: { MNNVLinkTopology: Record<string, unknown> } }).Nvidia.MNNVLinkTopology;
        assert.equal(typeof topo['ChassisSerialNumber'], 'string');
        assert.equal(typeof topo['TraySlotNumber'], 'number');
        assert.equal(typeof topo['TraySlotIndex'], 'number');
      }
      const system = tree.get('/redfish/v1/Systems/System_0')!;
      assert.equal(
        (system['Actions'] as Record<string, { target: string }>)['#ComputerSystem.Reset']!.target,
        '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset',
      );
    });
  }

  for (const id of ['powershelf-liteon', 'powershelf-delta'] as const) {
    it(`${id}: powershelf chassis with six PSUs and a Manager.Reset`, async () => {
      const base = t.url(id);
      const psus = await rf(base, 'GET', '/redfish/v1/Chassis/powershelf/PowerSubsystem/PowerSupplies');
      assert.equal(psus.body['Members@odata.count'], 6);
      assert.equal(new Set(psus.body.Members.map((m: { '@odata.id': string }) => m['@odata.id'])).size, 6);
      const shelf = await rf(base, 'GET', '/redfish/v1/Chassis/powershelf');
      assert.equal(shelf.body.PowerState, 'On');
      assert.ok(shelf.body.Actions['#Chassis.Reset'].target);
      const mgr = await rf(base, 'GET', '/redfish/v1/Managers/BMC_0');
      assert.equal(mgr.body.Actions['#Manager.Reset'].target, '/redfish/v1/Managers/BMC_0/Actions/Manager.Reset');
      assert.equal((await rf(base, 'GET', '/redfish/v1/Systems')).status, 404);
    });
  }

  it('power shelf output follows Chassis.Reset', async () => {
    const base = t.url('powershelf-delta');
    const off = await rf(base, 'POST', '/redfish/v1/Chassis/powershelf/Actions/Chassis.Reset', {
      body: { ResetType: 'ForceOff' },
    });
    assert.equal(off.status, 204);
    assert.equal((await rf(base, 'GET', '/redfish/v1/Chassis/powershelf')).body.PowerState, 'Off');
    const bad = await rf(base, 'POST', '/redfish/v1/Chassis/powershelf/Actions/Chassis.Reset', {
      body: { ResetType: 'Nmi' },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error['@Message.ExtendedInfo'][0].MessageId, /^Base\.1\.\d+\.ActionParameterValueNotInList$/);
  });

  it('unknown resources answer 404 with the Base ResourceNotFound message', async () => {
    const res = await rf(t.url('gb200-compute'), 'GET', '/redfish/v1/Chassis/NoSuch');
    assert.equal(res.status, 404);
    assert.match(res.body.error.code, /^Base\.1\.\d+\.ResourceNotFound$/);
  });

  it('requires credentials except on the service root', async () => {
    assert.equal((await rf(t.url('nvswitch-tray'), 'GET', '/redfish/v1', { auth: null })).status, 200);
    const denied = await rf(t.url('nvswitch-tray'), 'GET', '/redfish/v1/Systems', { auth: null });
    assert.equal(denied.status, 401);
    assert.match(denied.body.error.code, /NoValidSession$/);
  });
});

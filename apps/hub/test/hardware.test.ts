import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { firmwarePackages, insertSite, racks } from '@fleet/db';
import { hardwareOf, jobKinds, jobKindTable, nodeTypes } from '@fleet/domain';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// compute_gb300_lenovo is one row of the hardware table (packages/domain/src/hardware.ts) and nothing else: this
// shows the row alone makes it a node type the API lists, registers, filters on and plans campaigns over.
const lenovo = 'compute_gb300_lenovo';
// Durations that tell the roles apart, so the plan's estimate says which role the planner took the device for.
const durations = { compute: 111, switch: 222, power_shelf: 333 };

describe('the hardware table and job-kind registry in the API', () => {
  let hub: TestHub;
  let rackId = '';

  before(async () => {
    hub = await startTestHub({ maxPackageBytes: 1 << 20, campaigns: { deviceDurationS: durations } });
    await insertSite(hub.handle.db, { id: 'hw', name: 'Hardware lab' });
    [{ id: rackId }] = (await hub.handle.db
      .insert(racks)
      .values({ siteId: 'hw', name: 'rack-1', rackType: 'gb300_nvl72' })
      .returning({ id: racks.id })) as [{ id: string }];
  });
  after(() => hub.close());

  const call = (method: 'GET' | 'POST', url: string, token: string, body?: object) =>
    hub.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body ? { payload: body } : {}),
    });

  it('GET /v1/hardware lists every node type of the table with what follows from it', async () => {
    const res = await call('GET', '/v1/hardware', hub.tokens.viewer);
    assert.equal(res.statusCode, 200, res.body);
    const items = res.json().items as { node_type: string }[];
    assert.deepEqual(
      items.map((i) => i.node_type),
      nodeTypes,
    );
    const row = items.find((i) => i.node_type === lenovo);
    const h = hardwareOf(lenovo)!;
    assert.deepEqual(row, {
      node_type: lenovo,
      kind: 'compute',
      kind_label: 'Compute tray',
      vendor: 'lenovo',
      vendor_name: 'Lenovo',
      family: 'gb300',
      generation: h.generation,
      rack_type: 'gb300_nvl72',
      managers: ['bmc', 'hmc'],
      management_profile: 'redfish',
      firmware_profile: h.firmwareProfile,
      reset: 'system',
      status: 'development',
      rms_enum: 9,
    });
    const shelf = items.find((i) => i.node_type === 'powershelf_gb200_delta') as Record<string, unknown>;
    assert.equal(shelf['reset'], 'shelf-output');
    assert.equal(shelf['firmware_profile'], 'redfish-nvfwupd');
  });

  it('GET /v1/job-kinds lists the registry; GET /v1/whoami names the caller', async () => {
    const kinds = await call('GET', '/v1/job-kinds', hub.tokens.viewer);
    assert.equal(kinds.statusCode, 200, kinds.body);
    const items = kinds.json().items as { kind: keyof typeof jobKindTable; role: string; workflow_type: unknown }[];
    assert.deepEqual(
      items.map((i) => i.kind),
      jobKinds,
    );
    for (const i of items) {
      assert.equal(i.role, jobKindTable[i.kind].role, i.kind);
      assert.equal(i.workflow_type, jobKindTable[i.kind].workflowType, i.kind);
    }
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      const me = await call('GET', '/v1/whoami', hub.tokens[role]);
      assert.equal(me.statusCode, 200, me.body);
      assert.deepEqual(me.json(), { name: `t-${role}`, role, sites: null });
    }
    const anonymous = await hub.app.inject({ method: 'GET', url: '/v1/whoami' });
    assert.equal(anonymous.statusCode, 401);
  });

  it(`a ${lenovo} is registered, filtered on and planned as a compute tray`, async () => {
    const created = await call('POST', '/v1/devices', hub.tokens.admin, {
      name: 'lenovo-ct0',
      site_id: 'hw',
      node_type: lenovo,
      bmc_url: 'http://127.0.0.1:9500',
      credential_ref: 'bmc/default',
    });
    assert.equal(created.statusCode, 201, created.body);
    const deviceId = created.json().id as string;
    assert.equal(created.json().node_type, lenovo);
    await hub.handle.pool.query('update devices set rack_id = $1 where id = $2', [rackId, deviceId]);

    const listed = await call('GET', `/v1/devices?node_type=${lenovo}`, hub.tokens.viewer);
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(
      listed.json().items.map((d: { id: string }) => d.id),
      [deviceId],
    );
    const unknown = await call('GET', '/v1/devices?node_type=compute_gb999_nobody', hub.tokens.viewer);
    assert.equal(unknown.statusCode, 400);

    // A manifest for the new type, through the API, over a package in the catalog.
    const [pkg] = await hub.handle.db
      .insert(firmwarePackages)
      .values({
        digest: 'e'.repeat(64),
        sizeBytes: 10,
        fileName: 'lenovo.fwpkg',
        format: 'pldm',
        packageVersion: '1',
        metadata: {
          headerRevision: '1',
          headerUuid: 'u',
          releaseDateTime: null,
          devices: [],
          components: [
            {
              index: 0,
              identifier: 1,
              classification: 10,
              comparisonStamp: 0,
              version: '3.0',
              offset: 0,
              size: 1,
              sha256: '0'.repeat(64),
            },
          ],
        },
        uploadedBy: 'test',
      })
      .returning();
    const manifest = await call('POST', '/v1/firmware/manifests', hub.tokens.admin, {
      name: 'lenovo-3.0',
      hardware_type: lenovo,
      default: true,
      steps: [{ name: 'main', package_id: pkg!.id, components: [{ id: 'BMC', version: '3.0' }] }],
    });
    assert.equal(manifest.statusCode, 201, manifest.body);

    const dry = await call('POST', '/v1/firmware-campaigns', hub.tokens.operator, {
      name: 'lenovo',
      site_id: 'hw',
      dry_run: true,
    });
    assert.equal(dry.statusCode, 200, dry.body);
    const { plan } = dry.json();
    assert.deepEqual(plan.excluded, []);
    assert.deepEqual(
      plan.devices.map((d: { device_id: string; node_type: string }) => [d.device_id, d.node_type]),
      [[deviceId, lenovo]],
    );
    // One device in one canary wave: the campaign takes exactly one compute tray's time.
    assert.equal(plan.estimated_duration_s, durations.compute);
  });
});

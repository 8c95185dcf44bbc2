import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import {
  bmcCandidates,
  connectDb,
  createApiToken,
  getDevice,
  getDeviceStatus,
  getOrCreateSyncState,
  getSyncState,
  insertDevice,
  listDevicesJson,
  refreshInventoryIssues,
  setBmcUrls,
  setCondition,
  setLifecycle,
  updateSyncState,
  upsertDevices,
  upsertInterfaces,
  upsertIpAddresses,
  upsertRacks,
  upsertSites,
  type DbHandle,
  type DeviceRow,
} from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { randomUUID } from 'node:crypto';
import { bmcUrlFor } from '@fleet/domain';
import { buildHub } from '../src/app.js';
import { deviceView } from '../src/views.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';
const ts = '2026-12-01T10:00:00Z';

describe('hub inventory API over a synced mirror', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let app: FastifyInstance;
  let token = '';

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 4);
    app = buildHub({
      db: handle.db,
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      views: { temporalNamespace: 'default' },
    });
    token = (await createApiToken(handle.db, 'inv-viewer', 'viewer')).token;
    const db = handle.db;
    await upsertSites(db, [
      { netboxId: 1, slug: 'ams1', name: 'Amsterdam 1', status: 'active', netboxLastUpdated: ts },
      { netboxId: 2, slug: 'osl1', name: 'Oslo 1', status: 'active', netboxLastUpdated: ts },
    ]);
    await upsertRacks(db, [
      {
        netboxId: 10,
        siteNetboxId: 1,
        name: 'r001',
        rackType: 'gb200_nvl72',
        status: 'active',
        uHeight: 48,
        serial: null,
        netboxLastUpdated: ts,
      },
    ]);
    const base: Omit<DeviceRow, 'netboxId' | 'name' | 'position' | 'role' | 'nodeType' | 'oobIpNetboxId'> = {
      siteNetboxId: 1,
      rackNetboxId: 10,
      face: 'front',
      uHeight: 1,
      vendor: 'nvidia',
      model: 'GB200 NVL72 Compute Tray',
      platform: null,
      serial: null,
      lifecycleState: 'active',
      managementProfile: 'redfish-http:8443',
      credentialRef: 'bmc/default',
      netboxLastUpdated: ts,
      nvosUrl: null,
      nvosSsh: null,
      nvosCredentialRef: null,
      nvosHostKey: null,
    };
    const rows: DeviceRow[] = [];
    for (let i = 1; i <= 12; i++)
      rows.push({
        ...base,
        netboxId: 100 + i,
        name: `ct${String(i).padStart(2, '0')}`,
        position: 30 + i,
        role: 'compute-tray',
        nodeType: 'compute_gb200_nvidia',
        oobIpNetboxId: 1000 + i,
      });
    rows.push({
      ...base,
      netboxId: 200,
      name: 'sw01',
      position: 20,
      role: 'nvlink-switch-tray',
      nodeType: 'switch_gb200_nvidia',
      oobIpNetboxId: 2000,
      nvosUrl: 'https://10.0.0.5',
      nvosSsh: '10.0.0.5:22',
    });
    rows.push({
      ...base,
      netboxId: 201,
      name: 'toaster',
      position: 19,
      role: 'toaster',
      vendor: 'acme',
      nodeType: null,
      oobIpNetboxId: null,
    });
    rows.push({
      ...base,
      netboxId: 202,
      name: 'nobmc',
      position: 18,
      role: 'compute-tray',
      nodeType: 'compute_gb200_nvidia',
      oobIpNetboxId: null,
    });
    rows.push({
      ...base,
      netboxId: 300,
      siteNetboxId: 2,
      rackNetboxId: null,
      name: 'ct01',
      position: null,
      role: 'compute-tray',
      nodeType: 'compute_gb200_nvidia',
      oobIpNetboxId: 3000,
      lifecycleState: 'planned',
    });
    await upsertDevices(db, rows);
    const withIp = rows.filter((r) => r.oobIpNetboxId !== null);
    await upsertInterfaces(
      db,
      withIp.map((r) => ({
        netboxId: r.netboxId * 10,
        deviceNetboxId: r.netboxId,
        name: 'bmc',
        type: '1000base-t',
        macAddress: '02:00:00:00:00:01',
        mgmtOnly: true,
        enabled: true,
        netboxLastUpdated: ts,
      })),
    );
    await upsertIpAddresses(
      db,
      withIp.map((r, i) => ({
        netboxId: r.oobIpNetboxId!,
        // sw01 and ct01@osl1 share an address: a duplicate IP.
        address: r.name === 'sw01' || r.siteNetboxId === 2 ? '127.30.9.9/32' : `127.30.0.${i + 1}/32`,
        status: 'active',
        dnsName: null,
        interfaceNetboxId: r.netboxId * 10,
        netboxLastUpdated: ts,
      })),
    );
    await setBmcUrls(
      db,
      (await bmcCandidates(db)).map((c) => ({
        deviceId: c.deviceId,
        bmcUrl: c.duplicated || !c.addresses[0] ? null : bmcUrlFor(c.profile, c.addresses[0]),
      })),
    );
    await refreshInventoryIssues(db);
    await getOrCreateSyncState(db, 'netbox');
    await updateSyncState(db, 'netbox', {
      sourceUrl: 'http://netbox.example',
      stale: false,
      lastSuccessAt: new Date(),
    });
  });
  after(async () => {
    await app.close();
    await handle.close();
    await database.drop();
  });

  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: res.json() };
  };

  it('prepares a list statement once per shape on a connection, whatever values it is sent with', async () => {
    // First of the list's tests: a process names only the first 16 shapes it meets. One connection: the statements
    // it prepared are the ones pg_prepared_statements shows.
    const single = connectDb(database.url, 1);
    try {
      const page = async (siteId: string[]) =>
        (await listDevicesJson(single.db, { limit: 100, sort: 'name', filters: { siteId } }, 'netbox')).items.length;
      assert.deepEqual([await page(['ams1']), await page(['osl1']), await page(['ams1', 'osl1'])], [15, 1, 16]);
      const prepared = await single.pool.query<{ n: number }>(
        "select count(*)::int as n from pg_prepared_statements where name like 'fleet_device_list_%'",
      );
      assert.equal(prepared.rows[0]!.n, 2);
    } finally {
      await single.close();
    }
  });

  it('filters devices by site, role, node type and lifecycle state (repeat a parameter for OR)', async () => {
    assert.equal((await get('/v1/devices?site_id=ams1&limit=1000')).body.items.length, 15);
    assert.equal((await get('/v1/devices?role=compute-tray&site_id=ams1')).body.items.length, 13);
    assert.equal(
      (await get('/v1/devices?node_type=switch_gb200_nvidia&node_type=compute_gb200_nvidia')).body.items.length,
      15,
    );
    const planned = (await get('/v1/devices?lifecycle_state=planned')).body.items;
    assert.deepEqual(
      planned.map((d: { site_id: string }) => d.site_id),
      ['osl1'],
    );
    assert.equal((await get('/v1/devices?power_state=On')).body.items.length, 0);
  });

  it('pages with a keyset cursor in either sort direction without gaps or repeats', async () => {
    for (const sort of ['name', '-name', 'created_at', '-created_at']) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { status: number; body: { items: { id: string }[]; next_cursor: string | null } } = await get(
          `/v1/devices?limit=4&sort=${sort}${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(res.status, 200);
        seen.push(...res.body.items.map((d) => d.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      assert.equal(seen.length, 16, sort);
      assert.equal(new Set(seen).size, 16, sort);
    }
    const names = (await get('/v1/devices?sort=-name&limit=3')).body.items.map((d: { name: string }) => d.name);
    assert.deepEqual(names, ['toaster', 'sw01', 'nobmc']);
  });

  it('answers 400 naming the parameter for bad filters, cursors and page sizes', async () => {
    for (const [query, field] of [
      ['node_type=toaster', 'query.node_type.0'],
      ['power_state=Sideways', 'query.power_state.0'],
      ['lifecycle_state=melted', 'query.lifecycle_state.0'],
      ['rack_id=r001', 'query.rack_id.0'],
      ['sort=serial', 'query.sort'],
      ['limit=0', 'query.limit'],
      ['limit=1001', 'query.limit'],
      ['cursor=!!', 'query.cursor'],
      ['shape=round', 'query'],
    ]) {
      const res = await get(`/v1/devices?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.details[0].field, field, query);
    }
    const page = (await get('/v1/devices?limit=2&sort=name')).body.next_cursor;
    const wrongSort = await get(`/v1/devices?limit=2&sort=-created_at&cursor=${page}`);
    assert.equal(wrongSort.status, 400);
    assert.equal(wrongSort.body.error.details[0].field, 'query.cursor');
  });

  it('shows a rack elevation top first, with position, face and height', async () => {
    const racks = (await get('/v1/racks?site_id=ams1')).body.items;
    assert.equal(racks.length, 1);
    assert.equal(racks[0].device_count, 15);
    const rack = (await get(`/v1/racks/${racks[0].id}`)).body;
    assert.equal(rack.rack_type, 'gb200_nvl72');
    assert.deepEqual(
      rack.elevation
        .slice(0, 2)
        .map((e: { name: string; position: number; face: string; u_height: number }) => [
          e.name,
          e.position,
          e.face,
          e.u_height,
        ]),
      [
        ['ct12', 42, 'front', 1],
        ['ct11', 41, 'front', 1],
      ],
    );
    assert.equal(rack.provenance.netbox_url, `http://netbox.example/dcim/racks/10/`);
  });

  it('device detail carries interfaces, addresses, provenance and inventory issues', async () => {
    const list = (await get('/v1/devices?site_id=ams1&role=nvlink-switch-tray')).body.items;
    const sw = (await get(`/v1/devices/${list[0].id}`)).body;
    assert.equal(sw.interfaces[0].name, 'bmc');
    assert.deepEqual(sw.interfaces[0].addresses, ['127.30.9.9/32']);
    assert.equal(sw.bmc_url, null, 'a duplicated address is not used');
    assert.deepEqual(
      sw.inventory_issues.map((i: { code: string }) => i.code),
      ['duplicate_ip'],
    );
    assert.deepEqual(
      { source: sw.provenance.source, id: sw.provenance.netbox_id, stale: sw.provenance.stale },
      { source: 'netbox', id: 200, stale: false },
    );
    // osl1 has a ct01 too (with the duplicated address): ask for the one in ams1.
    const ct = (await get('/v1/devices?role=compute-tray&site_id=ams1&limit=1')).body.items[0];
    assert.equal(ct.bmc_url, 'http://127.30.0.1:8443');
  });

  it('lists inventory issues by code', async () => {
    const codes = (await get('/v1/inventory-issues?limit=100')).body.items.map((i: { code: string }) => i.code).sort();
    assert.deepEqual(codes, [
      'duplicate_ip',
      'duplicate_ip',
      'missing_bmc_address',
      'missing_bmc_address',
      'unknown_node_type',
    ]);
    assert.equal((await get('/v1/inventory-issues?code=unknown_node_type')).body.items.length, 1);
    assert.equal((await get('/v1/inventory-issues?code=melted')).status, 400);
  });

  it('a device the inventory cannot operate gets 409 FAILED_PRECONDITION on a power request', async () => {
    const opToken = (await createApiToken(handle.db, 'inv-operator', 'operator')).token;
    const nobmc = (await get('/v1/devices?sort=name&limit=100')).body.items.find(
      (d: { name: string }) => d.name === 'nobmc',
    );
    const res = await app.inject({
      method: 'POST',
      url: `/v1/devices/${nobmc.id}/power`,
      headers: { authorization: `Bearer ${opToken}` },
      payload: { action: 'on' },
    });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().error.code, 'FAILED_PRECONDITION');
    assert.match(res.json().error.message, /BMC address/);
  });

  it('serves an OpenAPI document covering every route', async () => {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    for (const path of [
      '/v1/devices',
      '/v1/devices/{id}',
      '/v1/devices/{id}/power',
      '/v1/devices/{id}/history',
      '/v1/racks/{id}',
      '/v1/jobs',
      '/v1/jobs/{id}/cancel',
      '/v1/inventory-issues',
      '/v1/sites',
    ]) {
      assert.ok(doc.paths[path], path);
    }
    const params = doc.paths['/v1/devices'].get.parameters.map((p: { name: string }) => p.name);
    for (const p of [
      'site_id',
      'rack_id',
      'role',
      'vendor',
      'model',
      'node_type',
      'lifecycle_state',
      'lifecycle',
      'condition',
      'power_state',
      'firmware_version',
      'sort',
      'cursor',
      'limit',
    ])
      assert.ok(params.includes(p), p);
  });

  it(`maps NVOS endpoints from the fleet_nvos_* fields; a switch tray without them, or with malformed ones, carries an \
issue`, async () => {
    const sw01 = (await get('/v1/devices?site_id=ams1&role=nvlink-switch-tray')).body.items[0];
    assert.deepEqual([sw01.nvos_url, sw01.nvos_ssh], ['https://10.0.0.5', '10.0.0.5:22']);
    const sw = {
      siteNetboxId: 1,
      rackNetboxId: 10,
      face: 'front',
      uHeight: 1,
      vendor: 'nvidia',
      model: 'GB200 NVL72 NVLink Switch Tray',
      platform: null,
      serial: null,
      lifecycleState: 'active',
      managementProfile: 'redfish',
      credentialRef: 'bmc/default',
      role: 'nvlink-switch-tray',
      nodeType: 'switch_gb200_nvidia',
      oobIpNetboxId: null,
      netboxLastUpdated: ts,
      nvosCredentialRef: null,
    };
    await upsertDevices(handle.db, [
      { ...sw, netboxId: 210, name: 'sw-bare', position: 10, nvosUrl: null, nvosSsh: null, nvosHostKey: null },
      {
        ...sw,
        netboxId: 211,
        name: 'sw-bad',
        position: 11,
        nvosUrl: 'ftp://10.0.0.7',
        nvosSsh: '10.0.0.7',
        nvosHostKey: 'md5:aa',
      },
    ]);
    await refreshInventoryIssues(handle.db);
    const issues = async (code: string) =>
      (await get(`/v1/inventory-issues?code=${code}`)).body.items.map((i: { netbox_id: number; message: string }) => [
        i.netbox_id,
        i.message,
      ]);
    assert.deepEqual(
      (await issues('missing_nvos_endpoint')).map(([id]: [number]) => id),
      [210],
    );
    assert.deepEqual(await issues('invalid_nvos_endpoint'), [
      [
        211,
        'fleet_nvos_url is ftp://10.0.0.7; expected http(s)://host[:port]; fleet_nvos_ssh is 10.0.0.7; ' +
          'expected host:port; fleet_nvos_host_key is not an SSH fingerprint (SHA256:<base64>)',
      ],
    ]);
    // Fixed in NetBox, the next sync resolves the issue.
    await upsertDevices(handle.db, [
      {
        ...sw,
        netboxId: 211,
        name: 'sw-bad',
        position: 11,
        nvosUrl: 'https://[fd00::7]:8443',
        nvosSsh: '[fd00::7]:22',
        nvosHostKey: `SHA256:${'A'.repeat(43)}`,
      },
    ]);
    await refreshInventoryIssues(handle.db);
    assert.deepEqual(await issues('invalid_nvos_endpoint'), []);
    await handle.pool.query('delete from inventory_issues where netbox_id in (210, 211)');
    await handle.pool.query('delete from devices where netbox_id in (210, 211)');
  });

  // Postgres writes the list's device JSON (listDevicesJson): it must stay deviceView's, field for field and in order.
  it('lists each device exactly as deviceView shows it, for NetBox and API devices and odd values', async () => {
    const odd = await insertDevice(handle.db, {
      siteId: 'osl1',
      name: 'odd "quoted" \\ tray\u2028 ünïcode',
      position: 10.5,
      uHeight: 2,
      role: 'odd-role',
      vendor: 'acme',
      model: 'tab\tmodel',
      serial: 'SN\u0001',
    });
    // Microseconds: the API shows milliseconds, truncated as JavaScript's Date does.
    await handle.pool.query(
      `update devices set power_state = 'On', power_state_at = '2026-12-01 10:00:00.123999+00',
         created_at = '2026-12-01 09:00:00.000999+00' where id = $1`,
      [odd.id],
    );
    // Fleet's lifecycle moved (since: the move) and conditions with odd text; the other devices never moved (since:
    // their creation) and have none.
    const jobId = randomUUID();
    for (const to of ['enrolling', 'enrolled'] as const)
      await setLifecycle(handle.db, { deviceId: odd.id, to, writer: 'lifecycle-workflow', jobId, reason: 'Test' });
    await setCondition(handle.db, {
      deviceId: odd.id,
      type: 'BMCReachable',
      status: 'False',
      reason: 'ConnectionRefused',
      message: 'odd "quoted" \\ text\u2028 ünïcode\n',
      observedGeneration: 2 ** 40,
      writer: 'satellite',
    });
    await setCondition(handle.db, {
      deviceId: odd.id,
      type: 'BurnInPassed',
      status: 'Unknown',
      reason: 'NotRun',
      writer: 'burn-in-workflow',
    });
    try {
      for (const syncUrl of ['http://netbox.example/', '']) {
        await updateSyncState(handle.db, 'netbox', { sourceUrl: syncUrl });
        const sync = await getSyncState(handle.db, 'netbox');
        const listed = (await get('/v1/devices?limit=1000')).body.items as {
          id: string;
          lifecycle: { state: string };
          conditions: unknown[];
        }[];
        assert.ok(listed.some((d) => d.id === odd.id));
        for (const item of listed) {
          const device = (await getDevice(handle.db, item.id))!;
          const expected = JSON.stringify(deviceView(device, await getDeviceStatus(handle.db, device), sync));
          assert.equal(JSON.stringify(item), expected);
        }
        const shown = listed.find((d) => d.id === odd.id)!;
        assert.deepEqual([shown.lifecycle.state, shown.conditions.length], ['enrolled', 2]);
      }
    } finally {
      await updateSyncState(handle.db, 'netbox', { sourceUrl: 'http://netbox.example' });
      await handle.pool.query('delete from devices where id = $1', [odd.id]);
    }
  });
});

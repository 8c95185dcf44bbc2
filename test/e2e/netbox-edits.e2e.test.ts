import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { Registry } from 'prom-client';
import { connectDb, type DbHandle } from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { createSyncMetrics, NetboxClient, NetboxSync, type SyncResult } from '@fleet/netbox-agent';
import { planFleet } from '../../tools/fleetgen/layout.js';
import { NetboxWriter, writeFleet } from '../../tools/fleetgen/netbox-writer.js';
import { testEnv } from '../harness/env.js';
import { startNetbox, type NetboxServer } from '../harness/netbox.js';

type Row = Record<string, unknown>;

/**
 * Ordinary NetBox edits that each used to stop every later sync on a unique index of the mirror. Each is made in a
 * real NetBox, then the next incremental sync (and a full one at the end) must succeed and mirror it.
 */
describe('NetBox edits that names alone cannot follow', () => {
  let netbox: NetboxServer;
  let database: TestDatabase;
  let handle: DbHandle;
  let writer: NetboxWriter;
  let client: NetboxClient;
  let sync: NetboxSync;
  let siteId = 0;
  const ids: Record<string, number> = {};

  const one = async (path: string) => (await writer.call<{ results: { id: number }[] }>('GET', path)).results[0]!.id;
  const rows = async (text: string, params: unknown[] = []) => (await handle.pool.query<Row>(text, params)).rows;
  const openSyncIssues = () =>
    rows(
      'select code, object_type, netbox_id from inventory_issues where resolved_at is null and code in ' +
        "('apply_failed', 'site_not_mirrored', 'invalid_site_id', 'site_id_taken')",
    );
  const newDevice = (name: string, extra: Record<string, unknown> = {}) =>
    writer.call<{ id: number }>('POST', '/api/dcim/devices/', {
      name,
      site: siteId,
      device_type: ids['type'],
      role: ids['role'],
      status: 'active',
      ...extra,
    });
  /** The next sync resolves (a throw fails the test) and leaves no object unmirrored. */
  const nextSync = async (mode: 'incremental' | 'full' = 'incremental'): Promise<SyncResult> => {
    const result = mode === 'full' ? await sync.full() : await sync.incremental();
    assert.deepEqual(await openSyncIssues(), [], 'every object is mirrored');
    return result;
  };

  before(
    async () => {
      netbox = await startNetbox();
      writer = new NetboxWriter(netbox.url, netbox.token);
      const fleet = planFleet({
        sites: 1,
        racksPerSite: 1,
        rackTypes: ['gb200_nvl72'],
        firstAddress: '127.41.0.1',
        sitePrefix: 'nbe',
      });
      await writeFleet(writer, fleet, { managementProfile: 'redfish-http:8443', credentialRef: 'bmc/default' });
      siteId = await one('/api/dcim/sites/?slug=nbe-01');
      ids['type'] = await one('/api/dcim/device-types/?slug=compute-gb200-nvidia');
      ids['role'] = await one('/api/dcim/device-roles/?slug=compute-tray');
      const env = testEnv();
      database = await cloneTestDatabase(env.databaseUrl, env.templateDb);
      handle = connectDb(database.url, 2);
      client = new NetboxClient(netbox.url, netbox.token, { pageSize: 1000, timeoutMs: 30_000 });
      sync = new NetboxSync({
        db: handle.db,
        client,
        log: pino({ level: 'silent' }),
        metrics: createSyncMetrics(new Registry(), () => undefined),
        // No overlap: the next pass reads only what changed since this one.
        settings: { intervalS: 1, fullSyncIntervalS: 3600, overlapS: 0 },
      });
      await nextSync('full');
      assert.equal((await rows('select count(*)::int as n from devices')).at(0)!['n'], 35);
    },
    { timeout: 600_000 },
  );

  after(async () => {
    await client?.close();
    await handle?.close();
    await database?.drop();
    await netbox?.stop(true);
  });

  it('a new device reuses a deleted device name', async () => {
    const gone = await one('/api/dcim/devices/?name=nbe-01-r001-ct05');
    await writer.call('DELETE', `/api/dcim/devices/${gone}/`);
    const reborn = await newDevice('nbe-01-r001-ct05');
    await nextSync();
    assert.deepEqual(
      await rows(
        "select netbox_id, deleted_at is not null as deleted from devices where name = 'nbe-01-r001-ct05' " +
          'order by netbox_id',
      ),
      [
        { netbox_id: gone, deleted: true },
        { netbox_id: reborn.id, deleted: false },
      ],
    );
  });

  it('two devices in one site share a name under different tenants', async () => {
    const tenants = [];
    for (const t of ['tenant-a', 'tenant-b'])
      tenants.push((await writer.call<{ id: number }>('POST', '/api/tenancy/tenants/', { name: t, slug: t })).id);
    for (const tenant of tenants) await newDevice('shared-01', { tenant });
    await nextSync();
    assert.deepEqual(await rows("select site_id from devices where name = 'shared-01' and deleted_at is null"), [
      { site_id: 'nbe-01' },
      { site_id: 'nbe-01' },
    ]);
  });

  it('a rename chain: a device takes the name another gave up in the same sync', async () => {
    const a = await one('/api/dcim/devices/?name=nbe-01-r001-ct06');
    const b = await one('/api/dcim/devices/?name=nbe-01-r001-ct07');
    await writer.call('PATCH', `/api/dcim/devices/${b}/`, { name: 'nbe-01-r001-ct07-old' });
    await writer.call('PATCH', `/api/dcim/devices/${a}/`, { name: 'nbe-01-r001-ct07' });
    await nextSync();
    assert.deepEqual(
      await rows('select netbox_id, name from devices where netbox_id = any($1) order by netbox_id', [[a, b]]),
      [
        { netbox_id: a, name: 'nbe-01-r001-ct07' },
        { netbox_id: b, name: 'nbe-01-r001-ct07-old' },
      ],
    );
  });

  it('a rack name reused in another location of the same site', async () => {
    const locations = [];
    for (const l of ['hall-a', 'hall-b'])
      locations.push(
        (
          await writer.call<{ id: number }>('POST', '/api/dcim/locations/', {
            name: l,
            slug: l,
            site: siteId,
            status: 'active',
          })
        ).id,
      );
    for (const location of locations)
      await writer.call('POST', '/api/dcim/racks/', {
        name: 'spare-rack',
        site: siteId,
        location,
        status: 'planned',
        u_height: 48,
        width: 19,
      });
    await nextSync();
    assert.deepEqual(await rows("select site_id from racks where name = 'spare-rack'"), [
      { site_id: 'nbe-01' },
      { site_id: 'nbe-01' },
    ]);
  });

  it('a site slug rename keeps the Fleet site id, with its racks and devices', async () => {
    await writer.call('PATCH', `/api/dcim/sites/${siteId}/`, { slug: 'nbe-01-renamed', name: 'NBE 01 renamed' });
    await nextSync();
    assert.deepEqual(await rows('select id, name, deleted_at from sites'), [
      { id: 'nbe-01', name: 'NBE 01 renamed', deleted_at: null },
    ]);
    // A device changed after the rename still lands in the same Fleet site.
    await newDevice('after-rename');
    await nextSync();
    assert.deepEqual(await rows("select site_id from devices where name = 'after-rename'"), [{ site_id: 'nbe-01' }]);
  });

  it('a full sync after all five edits succeeds and keeps them', async () => {
    const result = await nextSync('full');
    assert.equal(result.written['device'], 38);
    assert.equal((await rows('select count(*)::int as n from devices where deleted_at is null')).at(0)!['n'], 38);
    assert.equal((await rows('select count(*)::int as n from racks')).at(0)!['n'], 3);
  });

  it('maps the fleet_redfish_system_id custom field; absent is null', async () => {
    const ct = await one('/api/dcim/devices/?name=nbe-01-r001-ct01');
    await writer.call('PATCH', `/api/dcim/devices/${ct}/`, { custom_fields: { fleet_redfish_system_id: 'System_1' } });
    await nextSync();
    assert.deepEqual(
      await rows(
        "select name, redfish_system_id from devices where name in ('nbe-01-r001-ct01', " +
          "'nbe-01-r001-ct02') order by name",
      ),
      [
        { name: 'nbe-01-r001-ct01', redfish_system_id: 'System_1' },
        { name: 'nbe-01-r001-ct02', redfish_system_id: null },
      ],
    );
  });
});

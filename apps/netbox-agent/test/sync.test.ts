import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { Registry } from 'prom-client';
import { connectDb, getOrCreateSyncState, type DbHandle } from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { errorText } from '@fleet/config';
import { createSyncMetrics } from '../src/metrics.js';
import type { NetboxClient } from '../src/netbox-client.js';
import type {
  NbDevice,
  NbDeviceType,
  NbInterface,
  NbIpAddress,
  NbObjectChange,
  NbRack,
  NbSite,
} from '../src/netbox-types.js';
import { NetboxSync } from '../src/sync.js';

const databaseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

/** NetBox's REST lists in memory: the filters the agent uses (id, last_updated__gte) and the change log. */
class FakeNetbox {
  requests = 0;
  serverTime: Date | undefined = new Date();
  readonly baseUrl = 'http://netbox.invalid';
  readonly objects = new Map<string, { id: number; last_updated: string }[]>();
  readonly changes: NbObjectChange[] = [];
  /** The `fields` parameter of the latest list of each path. */
  readonly fieldsAsked = new Map<string, string[] | undefined>();
  private clock = Date.parse('2026-01-01T00:00:00Z');

  stamp(): string {
    this.clock += 1000;
    this.serverTime = new Date(this.clock);
    return new Date(this.clock).toISOString();
  }

  put(path: string, object: { id: number; last_updated?: string }): void {
    const list = this.objects.get(path) ?? [];
    this.objects.set(path, [...list.filter((o) => o.id !== object.id), { ...object, last_updated: this.stamp() }]);
  }

  async all<T>(path: string, params: Record<string, string | string[]> = {}): Promise<T[]> {
    this.requests++;
    if (path === '/api/core/object-changes/') return this.changes as T[];
    const ids = params['id'] ? new Set([params['id']].flat().map(Number)) : undefined;
    const since = params['last_updated__gte'] as string | undefined;
    // Nested site briefs carry the site's current slug, as NetBox serialises them.
    const slugs = new Map((this.objects.get('/api/dcim/sites/') ?? []).map((s) => [s.id, (s as NbSite).slug]));
    // `?fields=` as NetBox has it: only the named fields are serialised.
    const fields = typeof params['fields'] === 'string' ? params['fields'].split(',') : undefined;
    this.fieldsAsked.set(path, fields);
    return (this.objects.get(path) ?? [])
      .filter((o) => (!ids || ids.has(o.id)) && (!since || o.last_updated >= since))
      .map((o) =>
        'site' in o ? { ...o, site: { id: (o as NbRack).site.id, slug: slugs.get((o as NbRack).site.id) } } : o,
      )
      .map((o) => (fields ? Object.fromEntries(Object.entries(o).filter(([k]) => fields.includes(k))) : o)) as T[];
  }

  /** Pages of two objects, as NetBox's cursor pages: a pass spools several pages of each kind. */
  async *list<T>(path: string, params: Record<string, string | string[]> = {}): AsyncGenerator<T[]> {
    const objects = await this.all<T>(path, params);
    for (let i = 0; i < objects.length; i += 2) yield objects.slice(i, i + 2);
  }

  async close(): Promise<void> {}
}

const type: NbDeviceType = {
  id: 1,
  model: 'GB200 NVL72 Compute Tray',
  slug: 'compute-gb200-nvidia',
  u_height: 1,
  manufacturer: { id: 1, slug: 'nvidia' },
  last_updated: '',
};
const site = (id: number, slug: string): NbSite => ({
  id,
  slug,
  name: `Site ${slug}`,
  status: { value: 'active' },
  last_updated: '',
});
const rack = (id: number, siteId: number, name: string, uHeight = 48): NbRack => ({
  id,
  name,
  site: { id: siteId },
  status: { value: 'active' },
  u_height: uHeight,
  serial: null,
  rack_type: { id: 1, slug: 'gb200-nvl72' },
  last_updated: '',
});
const device = (id: number, siteId: number, rackId: number | null, name: string): NbDevice => ({
  id,
  name,
  device_type: { id: 1 },
  role: { id: 1, slug: 'compute-tray' },
  platform: null,
  serial: null,
  site: { id: siteId },
  rack: rackId === null ? null : { id: rackId },
  position: null,
  face: null,
  status: { value: 'active' },
  oob_ip: null,
  custom_fields: { fleet_credential_ref: 'bmc/default' },
  last_updated: '',
});

describe('NetBox sync: an object that cannot be applied', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let netbox: FakeNetbox;
  let warnings: string[];

  const sync = (settings: { spoolDir?: string } = {}) => {
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    return new NetboxSync({
      db: handle.db,
      client: netbox as unknown as NetboxClient,
      log,
      metrics: createSyncMetrics(new Registry(), () => undefined),
      settings: { intervalS: 1, fullSyncIntervalS: 3600, overlapS: 0, ...settings },
    });
  };
  const issues = async () =>
    (
      await handle.pool.query<{ object_type: string; netbox_id: number; code: string; message: string }>(
        'select object_type, netbox_id, code, message from inventory_issues where resolved_at is null and ' +
          'code <> $1 order by object_type, netbox_id',
        ['missing_bmc_address'],
      )
    ).rows;
  const names = async () =>
    (
      await handle.pool.query<{ name: string; site_id: string }>(
        'select name, site_id from devices where deleted_at is null order by name',
      )
    ).rows;

  before(async () => {
    database = await cloneTestDatabase(databaseUrl, template);
    handle = connectDb(database.url, 2);
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });
  beforeEach(async () => {
    await handle.pool.query(
      'truncate sites, racks, devices, interfaces, ip_addresses, inventory_issues, sync_state cascade',
    );
    // As the agent does when it starts.
    await getOrCreateSyncState(handle.db, 'netbox');
    netbox = new FakeNetbox();
    warnings = [];
    netbox.put('/api/dcim/device-types/', type);
    netbox.put('/api/dcim/sites/', site(1, 'ams1'));
    netbox.put('/api/dcim/racks/', rack(10, 1, 'r001'));
    netbox.put('/api/dcim/devices/', device(100, 1, 10, 'ct01'));
  });

  it(`a rack Postgres refuses becomes an issue naming it, logged whole without the statement parameters; the rest is \
mirrored`, async () => {
    // 2^31 U: out of range for the column, the kind of value only the database notices.
    netbox.put('/api/dcim/racks/', rack(11, 1, 'r-huge', 2 ** 31));
    netbox.put('/api/dcim/devices/', device(101, 1, 11, 'ct02'));
    const result = await sync().full();
    assert.deepEqual(result.refused, { site: 0, rack: 1, device: 0, interface: 0, ip: 0 });
    assert.deepEqual(
      (await names()).map((d) => d.name),
      ['ct01', 'ct02'],
      'the device of the refused rack is mirrored, unracked',
    );
    const [issue] = await issues();
    assert.deepEqual([issue!.object_type, issue!.netbox_id, issue!.code], ['dcim.rack', 11, 'apply_failed']);
    assert.match(
      issue!.message,
      /^rack r-huge \(NetBox id 11\) could not be mirrored: .*out of range for type integer/,
    );
    const logged = warnings.join('\n');
    assert.match(logged, /out of range for type integer/);
    assert.doesNotMatch(
      logged + issue!.message,
      /r001|bmc\/default|params:/,
      'no statement parameters in the log or the issue',
    );

    // The rack is not touched by the next incremental pass, but it is read again; fixed in NetBox, its issue resolves.
    const open = await sync().incremental();
    assert.equal(open.mode, 'incremental');
    assert.equal(open.refused['rack'], 1);
    assert.equal((await issues()).length, 1, 'still open while NetBox still has the bad value');
    netbox.objects.set(
      '/api/dcim/racks/',
      netbox.objects.get('/api/dcim/racks/')!.map((r) => (r.id === 11 ? { ...r, u_height: 48 } : r)),
    );
    await sync().incremental();
    assert.deepEqual(await issues(), []);
    const racks = (await handle.pool.query('select name from racks order by name')).rows.map((r) => r.name);
    assert.deepEqual(racks, ['r-huge', 'r001']);
  });

  it(`a transient database failure fails the whole pass, to be retried, with no issues; a refused row is an \
issue`, async () => {
    // Postgres fails every write of rack r-flaky with the SQLSTATE in test_fault while it holds one; with `once`, only
    // the first write (a sequence, which a rollback does not undo).
    await handle.pool.query(`
      create table test_fault (sqlstate text not null, once boolean not null default false);
      create sequence test_fault_once;
      create function test_fault() returns trigger language plpgsql as $$
      declare f test_fault%rowtype;
      begin
        select * into f from test_fault limit 1;
        if found and new.name = 'r-flaky' and (not f.once or nextval('test_fault_once') = 1) then
          raise exception 'simulated failure' using errcode = f.sqlstate;
        end if;
        return new;
      end $$;
      create trigger test_fault before insert or update on racks for each row execute function test_fault();`);
    const fault = async (sqlstate: string | null) => {
      await handle.pool.query('delete from test_fault');
      if (sqlstate) await handle.pool.query('insert into test_fault values ($1)', [sqlstate]);
    };
    const racks = async () =>
      (await handle.pool.query<{ name: string }>('select name from racks order by name')).rows.map((r) => r.name);
    try {
      netbox.put('/api/dcim/racks/', rack(11, 1, 'r-flaky'));
      // Serialization failure, statement timeout, connection failure, lock not available, aborted transaction.
      for (const sqlstate of ['40001', '57014', '08006', '55P03', '25P02']) {
        await fault(sqlstate);
        await assert.rejects(
          sync().full(),
          (err: Error) => errorText(err, { keys: true }).includes(`SQLSTATE ${sqlstate}`),
          sqlstate,
        );
        assert.deepEqual(await issues(), [], `${sqlstate}: no object is blamed`);
        assert.deepEqual(await racks(), [], `${sqlstate}: the pass rolled back as a whole`);
        assert.equal(
          (await getOrCreateSyncState(handle.db, 'netbox')).lastSuccessAt,
          null,
          `${sqlstate}: not a success`,
        );
      }
      // A deadlock that clears (the other writer's transaction ends): the pass applies what it read again, without
      // reading NetBox again, and succeeds.
      await handle.pool.query('delete from test_fault');
      await handle.pool.query(`insert into test_fault values ('40P01', true)`);
      const requestsBefore = netbox.requests;
      const retried = await sync().full();
      assert.equal(netbox.requests - requestsBefore, retried.requests);
      assert.equal(retried.requests, 6, 'device types and the five kinds, once each');
      assert.deepEqual(await racks(), ['r-flaky', 'r001']);
      assert.deepEqual(retried.written, { site: 1, rack: 2, device: 1, interface: 0, ip: 0 }, 'counted once');
      assert.ok(
        warnings.some((w) => w.includes('SQLSTATE 40P01') && w.includes('aborted the sync transaction')),
        'the retry is logged with its cause',
      );
      await handle.pool.query('truncate sites, racks, devices, inventory_issues cascade');
      // The next pass, the database well again, mirrors everything.
      await fault(null);
      await sync().full();
      assert.deepEqual(await racks(), ['r-flaky', 'r001']);
      // After a good pass, an incremental one fails as a whole too and leaves the mirror and its watermark as they
      // were.
      const before = await getOrCreateSyncState(handle.db, 'netbox');
      netbox.put('/api/dcim/racks/', rack(11, 1, 'r-flaky', 42));
      await fault('40P01');
      await assert.rejects(sync().incremental());
      assert.deepEqual(await issues(), []);
      assert.deepEqual((await getOrCreateSyncState(handle.db, 'netbox')).watermark, before.watermark);

      // A unique or data error is the row's own: an issue naming it, and the rest of the pass goes on.
      await handle.pool.query('truncate sites, racks, devices, inventory_issues cascade');
      for (const sqlstate of ['23505', '22001']) {
        await fault(sqlstate);
        const result = await sync().full();
        assert.equal(result.refused['rack'], 1, sqlstate);
        assert.deepEqual(await racks(), ['r001'], sqlstate);
        assert.deepEqual(
          (await names()).map((d) => d.name),
          ['ct01'],
          sqlstate,
        );
        assert.deepEqual(
          (await issues()).map((i) => [i.object_type, i.netbox_id, i.code]),
          [['dcim.rack', 11, 'apply_failed']],
          sqlstate,
        );
        assert.match(
          (await issues())[0]!.message,
          new RegExp(`^rack r-flaky \\(NetBox id 11\\) could not be mirrored: .*SQLSTATE ${sqlstate}`),
        );
      }
    } finally {
      await handle.pool.query(
        'drop trigger test_fault on racks; drop function test_fault(); drop table test_fault; ' +
          'drop sequence test_fault_once',
      );
    }
  });

  it(`a pass keeps what it read in a spool directory of its own, removed when the pass ends, whether it succeeded, \
NetBox failed or Postgres did; names with line breaks come back whole`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-spool-test-'));
    const racks = async () =>
      (await handle.pool.query<{ name: string }>('select name from racks order by name')).rows.map((r) => r.name);
    try {
      netbox.put('/api/dcim/racks/', rack(11, 1, 'r002 line\nbreak \u2028 and "quotes"'));
      for (let i = 1; i <= 6; i++) netbox.put('/api/dcim/devices/', device(100 + i, 1, 11, `ct0${i + 1}`));
      let spooled: string[] | undefined;
      const all = netbox.all.bind(netbox);
      netbox.all = (async (path: string, params?: Record<string, string | string[]>) => {
        // Looked at while the devices are read, after the sites and racks: a pass directory, one file per kind.
        if (path === '/api/dcim/devices/') spooled = (await readdir(dir, { recursive: true })).sort();
        return all(path, params);
      }) as typeof netbox.all;
      const result = await sync({ spoolDir: dir }).full();
      assert.deepEqual(result.written, { site: 1, rack: 2, device: 7, interface: 0, ip: 0 });
      assert.equal(spooled?.length, 3, `${spooled}`);
      assert.match(spooled![0]!, /^fleet-netbox-pass-/);
      assert.deepEqual(await racks(), ['r001', 'r002 line\nbreak \u2028 and "quotes"']);
      assert.equal((await names()).length, 7);
      assert.deepEqual(await readdir(dir), [], 'removed after a pass that succeeded');

      netbox.all = (async (path: string, params?: Record<string, string | string[]>) => {
        if (path === '/api/dcim/interfaces/') throw new Error('NetBox 502: /api/dcim/interfaces/');
        return all(path, params);
      }) as typeof netbox.all;
      await assert.rejects(sync({ spoolDir: dir }).full(), /NetBox 502/);
      assert.deepEqual(await readdir(dir), [], 'removed after NetBox failed');
      netbox.all = all;

      await handle.pool.query(`
        create function test_refuse() returns trigger language plpgsql as $$
        begin raise exception 'simulated failure' using errcode = '57014'; end $$;
        create trigger test_refuse before update on racks for each row execute function test_refuse();`);
      try {
        await assert.rejects(sync({ spoolDir: dir }).full(), (err: Error) =>
          errorText(err, { keys: true }).includes('SQLSTATE 57014'),
        );
      } finally {
        await handle.pool.query('drop trigger test_refuse on racks; drop function test_refuse()');
      }
      assert.deepEqual(await readdir(dir), [], 'removed after Postgres failed the pass');
      assert.equal((await names()).length, 7, 'the mirror is as the last good pass left it');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it(`a site whose slug is no DNS label is an issue naming it; its racks and devices are reported \
skipped`, async () => {
    netbox.put('/api/dcim/sites/', site(2, 'Lab_B'));
    netbox.put('/api/dcim/racks/', rack(20, 2, 'r001'));
    netbox.put('/api/dcim/devices/', device(200, 2, 20, 'ct01'));
    const result = await sync().full();
    assert.equal(result.skipped['device'], 1);
    assert.equal(result.skipped['rack'], 1);
    assert.deepEqual(
      (await names()).map((d) => d.site_id),
      ['ams1'],
    );
    const found = await issues();
    assert.deepEqual(
      found.map((i) => [i.object_type, i.netbox_id, i.code]),
      [
        ['dcim.device', 200, 'site_not_mirrored'],
        ['dcim.rack', 20, 'site_not_mirrored'],
        ['dcim.site', 2, 'invalid_site_id'],
      ],
    );
    assert.match(
      found[2]!.message,
      new RegExp(
        /^site Site Lab_B \(slug Lab_B, NetBox id 2\): /.source +
          /the slug is no Fleet site id, which must be a lower-case DNS label/.source,
      ),
    );
    assert.match(found[0]!.message, /^device ct01 \(NetBox id 200\) is in NetBox site Lab_B, which is not mirrored/);
    assert.match(warnings.join('\n'), /3 NetBox objects are not mirrored/);

    // Renamed to a valid slug, the site and what it holds come in with the next incremental pass.
    netbox.put('/api/dcim/sites/', site(2, 'lab-b'));
    await sync().incremental();
    assert.deepEqual(
      (await names()).map((d) => d.site_id),
      ['ams1', 'lab-b'],
    );
    assert.deepEqual(await issues(), []);
  });

  it(`a renamed site slug keeps its Fleet site id; a new site taking the old slug is an issue, not a failed \
sync`, async () => {
    await sync().full();
    netbox.put('/api/dcim/sites/', site(1, 'ams-one'));
    netbox.put('/api/dcim/sites/', site(3, 'ams1'));
    netbox.put('/api/dcim/devices/', device(300, 3, null, 'ct01'));
    await sync().incremental();
    const sites = (await handle.pool.query('select id, netbox_id, name from sites order by id')).rows;
    assert.deepEqual(sites, [{ id: 'ams1', netbox_id: 1, name: 'Site ams-one' }]);
    assert.deepEqual(await names(), [{ name: 'ct01', site_id: 'ams1' }]);
    assert.deepEqual(
      (await issues()).map((i) => [i.object_type, i.netbox_id, i.code]),
      [
        ['dcim.device', 300, 'site_not_mirrored'],
        ['dcim.site', 3, 'site_id_taken'],
      ],
    );
  });

  it(`the agent asks NetBox only for the fields it reads (\`?fields=\`), and those are enough to mirror every \
column`, async () => {
    netbox.put('/api/dcim/devices/', {
      ...device(101, 1, 10, 'ct02'),
      platform: { id: 3, slug: 'nvos' },
      serial: 'SN-101',
      position: 7,
      face: { value: 'front' },
      custom_fields: { fleet_credential_ref: 'bmc/ct02', fleet_redfish_system_id: 'System_1', unrelated: 'x' },
      // What a full serialisation also carries and the mirror has no use for.
      tenant: { id: 9 },
      interface_count: 4,
    } as NbDevice);
    netbox.put('/api/dcim/interfaces/', {
      id: 500,
      device: { id: 101 },
      name: 'bmc',
      type: { value: '1000base-t' },
      enabled: true,
      mgmt_only: true,
      primary_mac_address: { mac_address: '02:00:00:00:01:01' },
    } as NbInterface);
    netbox.put('/api/ipam/ip-addresses/', {
      id: 600,
      address: '10.0.0.101/24',
      status: { value: 'active' },
      dns_name: 'ct02-bmc.example',
      assigned_object_type: 'dcim.interface',
      assigned_object_id: 500,
    } as NbIpAddress);
    await sync().full();
    for (const path of [
      '/api/dcim/sites/',
      '/api/dcim/racks/',
      '/api/dcim/devices/',
      '/api/dcim/device-types/',
      '/api/dcim/interfaces/',
      '/api/ipam/ip-addresses/',
    ])
      assert.ok(netbox.fieldsAsked.get(path)?.includes('last_updated'), `${path} is read with ?fields=`);
    const addressed = (
      await handle.pool.query(
        `select i.name, i.type, i.mac_address, i.mgmt_only, i.enabled, a.address, a.status, a.dns_name,
           s.status as site_status, r.serial as rack_serial, r.rack_type, r.status as rack_status,
           d.lifecycle_state, d.bmc_url
         from interfaces i join ip_addresses a on a.interface_id = i.id join devices d on d.id = i.device_id
           join racks r on r.id = d.rack_id join sites s on s.id = d.site_id`,
      )
    ).rows;
    assert.deepEqual(addressed, [
      {
        name: 'bmc',
        type: '1000base-t',
        mac_address: '02:00:00:00:01:01',
        mgmt_only: true,
        enabled: true,
        address: '10.0.0.101/24',
        status: 'active',
        dns_name: 'ct02-bmc.example',
        site_status: 'active',
        rack_serial: null,
        rack_type: 'gb200_nvl72',
        rack_status: 'active',
        lifecycle_state: 'active',
        bmc_url: 'https://10.0.0.101',
      },
    ]);
    const row = (
      await handle.pool.query(
        `select d.serial, d.platform, d."position", d.face, d.role, d.credential_ref, d.redfish_system_id, d.u_height,
           d.vendor, d.model, r.name as rack, r.u_height as rack_u_height, s.id as site
         from devices d join racks r on r.id = d.rack_id join sites s on s.id = d.site_id where d.name = 'ct02'`,
      )
    ).rows[0];
    assert.deepEqual(row, {
      serial: 'SN-101',
      platform: 'nvos',
      position: '7',
      face: 'front',
      role: 'compute-tray',
      credential_ref: 'bmc/ct02',
      redfish_system_id: 'System_1',
      u_height: '1',
      vendor: 'nvidia',
      model: 'GB200 NVL72 Compute Tray',
      rack: 'r001',
      rack_u_height: 48,
      site: 'ams1',
    });
  });

  it('a device reusing a deleted device name, and names repeated in one site, are mirrored', async () => {
    await sync().full();
    netbox.objects.set('/api/dcim/devices/', []);
    netbox.changes.push({
      id: 1,
      time: netbox.stamp(),
      action: { value: 'delete' },
      changed_object_type: 'dcim.device',
      changed_object_id: 100,
    });
    netbox.put('/api/dcim/devices/', device(101, 1, 10, 'ct01'));
    netbox.put('/api/dcim/devices/', device(102, 1, 10, 'ct01'));
    netbox.put('/api/dcim/racks/', rack(12, 1, 'r001'));
    await sync().incremental();
    const rows = (
      await handle.pool.query(
        'select netbox_id, name, deleted_at is not null as deleted from devices order by netbox_id',
      )
    ).rows;
    assert.deepEqual(rows, [
      { netbox_id: 100, name: 'ct01', deleted: true },
      { netbox_id: 101, name: 'ct01', deleted: false },
      { netbox_id: 102, name: 'ct01', deleted: false },
    ]);
    assert.equal((await handle.pool.query("select count(*)::int as n from racks where name = 'r001'")).rows[0].n, 2);
  });

  it(`the firmware compliance of the devices a pass writes follows once, at the end of the pass: new, renamed and \
deleted devices`, async () => {
    const compliance = async () =>
      (
        await handle.pool.query<{ name: string; status: string }>(
          'select name, status from device_compliance order by name',
        )
      ).rows.map((r) => `${r.name}:${r.status}`);
    await sync().full();
    assert.deepEqual(await compliance(), ['ct01:no_manifest']);
    netbox.put('/api/dcim/devices/', device(100, 1, 10, 'ct01-renamed'));
    netbox.put('/api/dcim/devices/', device(101, 1, 10, 'ct02'));
    await sync().incremental();
    assert.deepEqual(await compliance(), ['ct01-renamed:no_manifest', 'ct02:no_manifest']);
    netbox.objects.set(
      '/api/dcim/devices/',
      netbox.objects.get('/api/dcim/devices/')!.filter((d) => d.id !== 101),
    );
    netbox.changes.push({
      id: 2,
      time: netbox.stamp(),
      action: { value: 'delete' },
      changed_object_type: 'dcim.device',
      changed_object_id: 101,
    });
    await sync().incremental();
    assert.deepEqual(await compliance(), ['ct01-renamed:no_manifest']);
    // A full pass over a mirror whose compliance went missing puts it back.
    await handle.pool.query('delete from device_compliance');
    await sync().full();
    assert.deepEqual(await compliance(), ['ct01-renamed:no_manifest']);
  });
});

describe('NetBox sync: an incremental pass recomputes only what its changes affect', () => {
  let database: TestDatabase;
  let handle: DbHandle;

  before(async () => {
    database = await cloneTestDatabase(databaseUrl, template);
    handle = connectDb(database.url, 2);
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  /** Each device: a BMC interface holding its OOB IP, 10.0.<id / 250>.<id % 250>/24. */
  const fleet = (netbox: FakeNetbox, devices: number) => {
    netbox.put('/api/dcim/device-types/', type);
    netbox.put('/api/dcim/sites/', site(1, 'ams1'));
    netbox.put('/api/dcim/racks/', rack(10, 1, 'r001'));
    for (let id = 1; id <= devices; id++) {
      netbox.put('/api/dcim/devices/', oob(device(id, 1, 10, `ct${id}`), id));
      const bmc: NbInterface = {
        id,
        device: { id },
        name: 'bmc',
        type: null,
        enabled: true,
        mgmt_only: true,
        last_updated: '',
      };
      netbox.put('/api/dcim/interfaces/', bmc);
      netbox.put('/api/ipam/ip-addresses/', ip(id, hostOf(id)));
    }
  };
  const oob = (d: NbDevice, ip: number): NbDevice => ({ ...d, oob_ip: { id: ip } });
  const hostOf = (id: number) => `10.0.${Math.floor(id / 250)}.${id % 250}`;
  const ip = (id: number, host: string): NbIpAddress => ({
    id,
    address: `${host}/24`,
    status: { value: 'active' },
    dns_name: '',
    assigned_object_type: 'dcim.interface',
    assigned_object_id: id,
    last_updated: '',
  });
  const state = async (names: string[]) =>
    (
      await handle.pool.query<{ name: string; bmc_url: string | null; codes: string[] | null }>(
        `select d.name, d.bmc_url, (select array_agg(i.code order by i.code) from inventory_issues i
           where i.device_id = d.id and i.resolved_at is null) as codes
         from devices d where d.name = any($1) order by d.name`,
        [names],
      )
    ).rows;

  /** The same edits at each size; what each pass recomputed and what it left in the mirror. */
  const run = async (devices: number) => {
    await handle.pool.query(
      'truncate sites, racks, devices, interfaces, ip_addresses, inventory_issues, sync_state cascade',
    );
    await getOrCreateSyncState(handle.db, 'netbox');
    const netbox = new FakeNetbox();
    fleet(netbox, devices);
    const sync = new NetboxSync({
      db: handle.db,
      client: netbox as unknown as NetboxClient,
      log: pino({ level: 'silent' }),
      metrics: createSyncMetrics(new Registry(), () => undefined),
      settings: { intervalS: 1, fullSyncIntervalS: 3600, overlapS: 0 },
    });
    const full = await sync.full();
    assert.equal(full.derivedDevices, devices, 'a full pass recomputes every device');
    const derived: number[] = [];
    const seen: unknown[] = [];
    const watched = ['ct2', 'ct3', 'ct4', 'ct5'];

    // ct3's address moves onto ct4's: both are flagged (ct4 did not change), and lose their BMC endpoint.
    netbox.put('/api/ipam/ip-addresses/', ip(3, hostOf(4)));
    // ct2 gets a serial.
    netbox.put('/api/dcim/devices/', oob({ ...device(2, 1, 10, 'ct2'), serial: 'SN2' }, 2));
    derived.push((await sync.incremental()).derivedDevices);
    seen.push(await state(watched));

    // Moved back: the flag is gone from both, though only ct3's address changed.
    netbox.put('/api/ipam/ip-addresses/', ip(3, hostOf(3)));
    derived.push((await sync.incremental()).derivedDevices);
    seen.push(await state(watched));

    // ct5 loses its credential, then is deleted: its issue opens, then resolves.
    netbox.put('/api/dcim/devices/', oob({ ...device(5, 1, 10, 'ct5'), custom_fields: {} }, 5));
    derived.push((await sync.incremental()).derivedDevices);
    seen.push(await state(watched));
    netbox.objects.set(
      '/api/dcim/devices/',
      netbox.objects.get('/api/dcim/devices/')!.filter((d) => d.id !== 5),
    );
    netbox.changes.push({
      id: 1,
      time: netbox.stamp(),
      action: { value: 'delete' },
      changed_object_type: 'dcim.device',
      changed_object_id: 5,
    });
    derived.push((await sync.incremental()).derivedDevices);
    seen.push(await state(watched));
    return { derived, seen };
  };

  it(`the devices recomputed and the issues left are the same in a mirror of 20 devices and of 400; a device whose \
address another device takes or gives back is recomputed though it did not change`, async () => {
    const small = await run(20);
    const large = await run(400);
    assert.deepEqual(large.derived, small.derived, 'the work of an incremental pass does not grow with the mirror');
    // ct2 and ct3 changed, ct4 holds the address ct3 took; then ct3 and ct4; then ct5 twice (deleted: not recomputed).
    // Each pass also reads again the last object the one before saw (last_updated__gte its watermark): one device more.
    assert.deepEqual(small.derived, [3 + 1, 2 + 1, 1 + 1, 0]);
    assert.deepEqual(large.seen, small.seen);
    const url = (id: number) => `https://${hostOf(id)}`;
    assert.deepEqual(small.seen, [
      [
        { name: 'ct2', bmc_url: url(2), codes: null },
        { name: 'ct3', bmc_url: null, codes: ['duplicate_ip'] },
        { name: 'ct4', bmc_url: null, codes: ['duplicate_ip'] },
        { name: 'ct5', bmc_url: url(5), codes: null },
      ],
      [
        { name: 'ct2', bmc_url: url(2), codes: null },
        { name: 'ct3', bmc_url: url(3), codes: null },
        { name: 'ct4', bmc_url: url(4), codes: null },
        { name: 'ct5', bmc_url: url(5), codes: null },
      ],
      [
        { name: 'ct2', bmc_url: url(2), codes: null },
        { name: 'ct3', bmc_url: url(3), codes: null },
        { name: 'ct4', bmc_url: url(4), codes: null },
        { name: 'ct5', bmc_url: url(5), codes: ['missing_credential_ref'] },
      ],
      [
        { name: 'ct2', bmc_url: url(2), codes: null },
        { name: 'ct3', bmc_url: url(3), codes: null },
        { name: 'ct4', bmc_url: url(4), codes: null },
        { name: 'ct5', bmc_url: url(5), codes: null },
      ],
    ]);
  });
});

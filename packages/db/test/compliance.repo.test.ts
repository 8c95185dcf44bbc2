import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ManifestStep } from '@fleet/domain';
import { eq } from 'drizzle-orm';
import {
  complianceSummary,
  connectDb,
  deleteFirmwareManifest,
  getFirmwareManifest,
  devices,
  insertDevice,
  insertFirmwareManifest,
  insertSite,
  listDeviceCompliance,
  makeDefaultFirmwareManifest,
  recordDeviceFirmware,
  updateFirmwareManifest,
  type DbHandle,
  type FirmwareManifest,
} from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

const COMPUTE = 'compute_gb200_nvidia';
const SWITCH = 'switch_gb200_nvidia';
const POWER = 'powershelf_gb200_liteon';

const step = (name: string, components: [string, string][]): ManifestStep => ({
  name,
  packageId: randomUUID(),
  targets: [],
  components: components.map(([id, version]) => ({ id, version })),
});

// The per-request computation the hub ran before migration 0026, kept as the oracle the maintained table must equal.
const PER_REQUEST = `
  with desired as (
    select distinct on (m.id, comp->>'id') m.id as manifest_id, comp->>'id' as component_id,
      comp->>'version' as version
    from firmware_manifests m,
      jsonb_array_elements(m.steps) with ordinality as s(step, si),
      jsonb_array_elements(s.step->'components') with ordinality as cv(comp, ci)
    where m.is_default
    order by m.id, comp->>'id', si desc, ci desc)
  select devices.id as device_id, m.id as manifest_id,
    case when m.id is null then 'no_manifest'
         when cmp.outdated > 0 then 'outdated'
         when cmp.missing > 0 then 'unknown'
         else 'compliant' end as status
  from devices
  left join firmware_manifests m on m.is_default and m.hardware_type = devices.node_type
  left join lateral (
    select count(*) filter (where f.version is distinct from w.version and f.version is not null) as outdated,
           count(*) filter (where f.version is null) as missing
    from desired w left join device_firmware f on f.device_id = devices.id and f.component_id = w.component_id
    where w.manifest_id = m.id) cmp on true
  where devices.deleted_at is null
  order by devices.id`;

/** A small deterministic PRNG (mulberry32), so a failing fixture can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('device compliance kept by triggers (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 5);
    await insertSite(handle.db, { id: 'cmp-a', name: 'A' });
    await insertSite(handle.db, { id: 'cmp-b', name: 'B' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const summary = async (f = {}) => {
    const s = await complianceSummary(handle.db, f);
    return Object.fromEntries(Object.entries(s).filter(([, n]) => n > 0));
  };
  const report = (deviceId: string, components: [string, string][], at = new Date()) =>
    recordDeviceFirmware(handle.db, [
      { deviceId, jobId: randomUUID(), at, components: components.map(([id, version]) => ({ id, version })) },
    ]);
  const tables = async () => {
    const kept = await handle.pool.query(
      'select device_id, manifest_id, status from device_compliance order by device_id',
    );
    const computed = await handle.pool.query(PER_REQUEST);
    const renamed = await handle.pool.query(
      'select c.device_id from device_compliance c join devices d on d.id = c.device_id where c.name <> d.name',
    );
    assert.deepEqual(renamed.rows, [], 'device_compliance keeps each device name');
    return { kept: kept.rows, computed: computed.rows };
  };

  it('the summary follows firmware reports, manifest changes, node type changes and deletions', async () => {
    const m1 = await handle.db.transaction((tx) =>
      insertFirmwareManifest(tx, {
        name: 'cmp-compute-1',
        hardwareType: COMPUTE,
        isDefault: true,
        createdBy: 'test',
        // BMC is named twice: the last step's version is the one desired.
        steps: [
          step('one', [
            ['BMC', 'bmc-1'],
            ['BIOS', 'bios-1'],
          ]),
          step('two', [['BMC', 'bmc-2']]),
        ],
      }),
    );
    const add = async (name: string, nodeType: string | null, siteId = 'cmp-a') =>
      (await insertDevice(handle.db, { name, siteId, nodeType })).id;
    const a = await add('cmp-a1', COMPUTE);
    const b = await add('cmp-b1', COMPUTE, 'cmp-b');
    const c = await add('cmp-c1', SWITCH);
    assert.deepEqual(await summary(), { unknown: 2, no_manifest: 1 });

    await report(a, [
      ['BMC', 'bmc-2'],
      ['BIOS', 'bios-1'],
    ]);
    await report(b, [
      ['BMC', 'bmc-1'],
      ['BIOS', 'bios-1'],
    ]);
    assert.deepEqual(await summary(), { compliant: 1, outdated: 1, no_manifest: 1 });
    assert.deepEqual(await summary({ siteId: ['cmp-b'] }), { outdated: 1 });
    const outdated = await listDeviceCompliance(handle.db, { limit: 10, status: ['outdated'] });
    assert.deepEqual(
      outdated.map((d) => [d.name, d.manifestId, d.components.find((x) => x.id === 'BMC')]),
      [['cmp-b1', m1.id, { id: 'BMC', desired: 'bmc-2', installed: 'bmc-1', compliant: false }]],
    );

    // A renamed device moves in the by-name order of a status-filtered page, and the keyset follows it.
    await handle.db.update(devices).set({ name: 'cmp-0-b1' }).where(eq(devices.id, b));
    const page = await listDeviceCompliance(handle.db, { limit: 1, status: ['outdated', 'compliant'] });
    assert.deepEqual(
      page.map((d) => [d.name, d.status]),
      [['cmp-0-b1', 'outdated']],
    );
    const next = await listDeviceCompliance(handle.db, {
      limit: 5,
      status: ['outdated', 'compliant'],
      after: { name: 'cmp-0-b1', id: b },
    });
    assert.deepEqual(
      next.map((d) => d.name),
      ['cmp-a1'],
    );

    // A newer reading of b's BMC (an upsert, so the update path) makes it compliant; losing a's BIOS row, unknown.
    await report(b, [['BMC', 'bmc-2']]);
    await handle.pool.query(`delete from device_firmware where device_id = $1 and component_id = 'BIOS'`, [a]);
    assert.deepEqual(await summary(), { compliant: 1, unknown: 1, no_manifest: 1 });

    // The default manifest's steps change: every compute device is held to BIOS bios-2 now.
    await handle.db.transaction((tx) =>
      updateFirmwareManifest(tx, m1.id, {
        name: m1.name,
        hardwareType: COMPUTE,
        steps: [
          step('one', [
            ['BMC', 'bmc-2'],
            ['BIOS', 'bios-2'],
          ]),
        ],
      }),
    );
    assert.deepEqual(await summary(), { outdated: 1, unknown: 1, no_manifest: 1 });

    // Another manifest takes over as the default (two updates in one transaction), then the switch type gets one.
    const m2 = await handle.db.transaction((tx) =>
      insertFirmwareManifest(tx, {
        name: 'cmp-compute-2',
        hardwareType: COMPUTE,
        isDefault: true,
        createdBy: 'test',
        steps: [step('one', [['BMC', 'bmc-2']])],
      }),
    );
    assert.deepEqual(await summary(), { compliant: 2, no_manifest: 1 });
    assert.deepEqual(
      (await listDeviceCompliance(handle.db, { limit: 10, nodeType: [COMPUTE] })).map((d) => d.manifestId),
      [m2.id, m2.id],
    );
    await handle.db.transaction(async (tx) => {
      await insertFirmwareManifest(tx, {
        name: 'cmp-switch',
        hardwareType: SWITCH,
        isDefault: true,
        createdBy: 'test',
        steps: [step('nvos', [['NVOS', 'nvos-1']])],
      });
    });
    assert.deepEqual(await summary(), { compliant: 2, unknown: 1 });
    await handle.db.transaction(async (tx) => makeDefaultFirmwareManifest(tx, (await getFirmwareManifest(tx, m1.id))!));
    assert.deepEqual(await summary(), { outdated: 1, unknown: 2 });

    // b becomes a switch (outdated there), c a power shelf (no manifest for that type).
    await report(b, [['NVOS', 'nvos-0']]);
    await handle.db.update(devices).set({ nodeType: SWITCH }).where(eq(devices.id, b));
    await handle.db.update(devices).set({ nodeType: POWER }).where(eq(devices.id, c));
    assert.deepEqual(await summary(), { outdated: 1, unknown: 1, no_manifest: 1 });
    assert.deepEqual(await summary({ nodeType: [SWITCH] }), { outdated: 1 });

    // A soft-deleted device leaves the counts and comes back when restored; a hard delete removes its row.
    await handle.db.update(devices).set({ deletedAt: new Date() }).where(eq(devices.id, b));
    assert.deepEqual(await summary(), { unknown: 1, no_manifest: 1 });
    await handle.db.update(devices).set({ deletedAt: null }).where(eq(devices.id, b));
    assert.deepEqual(await summary(), { outdated: 1, unknown: 1, no_manifest: 1 });
    await handle.db.delete(devices).where(eq(devices.id, c));
    assert.deepEqual(await summary(), { outdated: 1, unknown: 1 });

    // Deleting the default switch manifest leaves b without one.
    const sw = await handle.pool.query<{ id: string }>(`select id from firmware_manifests where name = 'cmp-switch'`);
    await handle.db.transaction((tx) => deleteFirmwareManifest(tx, sw.rows[0]!.id));
    assert.deepEqual(await summary(), { unknown: 1, no_manifest: 1 });

    const { kept, computed } = await tables();
    assert.deepEqual(kept, computed);
  });

  it('two transactions reporting different components of one device leave the status both make', async () => {
    await handle.db.transaction((tx) =>
      insertFirmwareManifest(tx, {
        name: 'cmp-power',
        hardwareType: POWER,
        isDefault: true,
        createdBy: 'test',
        steps: [
          step('psu', [
            ['PSU0', 'psu-2'],
            ['PSU1', 'psu-2'],
          ]),
        ],
      }),
    );
    const shelf = (await insertDevice(handle.db, { name: 'cmp-shelf', siteId: 'cmp-b', nodeType: POWER })).id;
    const t0 = new Date(Date.now() - 60_000);
    await report(
      shelf,
      [
        ['PSU0', 'psu-1'],
        ['PSU1', 'psu-1'],
      ],
      t0,
    );
    const statusOf = async () =>
      (await listDeviceCompliance(handle.db, { limit: 1, siteId: ['cmp-b'], nodeType: [POWER] }))[0]!.status;
    assert.equal(await statusOf(), 'outdated');

    const first = await handle.pool.connect();
    const second = await handle.pool.connect();
    try {
      const write = `insert into device_firmware (device_id, component_id, version) values ($1, $2, 'psu-2')
        on conflict (device_id, component_id) do update set version = excluded.version`;
      await first.query('begin');
      await first.query(write, [shelf, 'PSU0']);
      await second.query('begin');
      // Each transaction alone still sees the other PSU outdated; the second waits for the first's lock, then reads.
      const pending = second.query(write, [shelf, 'PSU1']);
      const waiting = async () =>
        (
          await handle.pool.query(`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`)
        ).rows[0].n > 0;
      for (let i = 0; i < 100 && !(await waiting()); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(await waiting(), 'the second report waits for the first transaction');
      await first.query('commit');
      await pending;
      await second.query('commit');
    } finally {
      // Closed rather than returned to the pool: after a failure either may still be inside its transaction.
      first.release(true);
      second.release(true);
    }
    assert.equal(await statusOf(), 'compliant');
  });

  it('equals the per-request computation after a random sequence of writes', async () => {
    const seed = Number(process.env['FLEET_COMPLIANCE_SEED'] ?? Date.now() % 100_000);
    const rnd = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const types = [COMPUTE, SWITCH, POWER, null] as const;
    const components = ['BMC', 'BIOS', 'GPU0', 'CPLD', 'NIC'];
    const versions = ['v1', 'v2', 'v3'];
    const randomSteps = () =>
      Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, i) =>
        step(
          `s${i}`,
          Array.from({ length: Math.floor(rnd() * 4) }, () => [pick(components), pick(versions)] as [string, string]),
        ),
      );

    const manifests: FirmwareManifest[] = [];
    for (const [i, hardwareType] of [COMPUTE, COMPUTE, SWITCH, SWITCH].entries()) {
      const m = await handle.db.transaction((tx) =>
        insertFirmwareManifest(tx, {
          name: `rand-${seed}-${i}`,
          hardwareType,
          isDefault: i % 2 === 0,
          createdBy: 'test',
          steps: randomSteps(),
        }),
      );
      manifests.push(m);
    }
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      ids.push(
        (await insertDevice(handle.db, { name: `rand-${seed}-${i}`, siteId: 'cmp-a', nodeType: pick(types) })).id,
      );
    }

    for (let op = 0; op < 150; op++) {
      const r = rnd();
      const device = pick(ids);
      if (r < 0.5) {
        // A page of readings for several devices in one statement, as a workflow reports them (one reading per
        // device and component: the upsert takes each row once).
        const page = [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => pick(ids)))].map((id) => ({
          deviceId: id,
          jobId: randomUUID(),
          at: new Date(),
          components: [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(components)))].map(
            (c) => ({ id: c, version: pick(versions) }),
          ),
        }));
        await recordDeviceFirmware(handle.db, page);
      } else if (r < 0.6) {
        await handle.pool.query('delete from device_firmware where device_id = $1 and component_id = $2', [
          device,
          pick(components),
        ]);
      } else if (r < 0.7) {
        await handle.db
          .update(devices)
          .set(rnd() < 0.8 ? { nodeType: pick(types) } : { name: `rand-${seed}-r${op}` })
          .where(eq(devices.id, device));
      } else if (r < 0.78) {
        await handle.db
          .update(devices)
          .set({ deletedAt: rnd() < 0.5 ? new Date() : null })
          .where(eq(devices.id, device));
      } else if (r < 0.86) {
        const m = pick(manifests);
        await handle.db.transaction((tx) =>
          updateFirmwareManifest(tx, m.id, { name: m.name, hardwareType: m.hardwareType, steps: randomSteps() }),
        );
      } else if (r < 0.94) {
        const m = pick(manifests);
        await handle.db.transaction(async (tx) => {
          const current = await getFirmwareManifest(tx, m.id);
          await makeDefaultFirmwareManifest(tx, current!);
        });
      } else {
        await handle.db.delete(devices).where(eq(devices.id, device));
        ids.splice(ids.indexOf(device), 1);
        ids.push(
          (await insertDevice(handle.db, { name: `rand-${seed}-n${op}`, siteId: 'cmp-a', nodeType: pick(types) })).id,
        );
      }
    }

    const { kept, computed } = await tables();
    assert.ok(new Set(computed.map((r) => r.status)).size >= 3, `seed ${seed}: the fixture should mix statuses`);
    assert.deepEqual(kept, computed, `seed ${seed}`);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { connectDb, insertDevice, insertSite, readDeviceDetail, readRackDetail, type DbHandle } from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

/**
 * A detail's reads must not straddle a commit. To land a commit between them every time, a writer locks the table the
 * detail reads last, waits until the detail is blocked on it (its first reads done), commits a change to both that
 * table and one read earlier, and releases it. Reads on their own each see a different half of that commit.
 */
describe('device and rack details read one snapshot (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let writer: pg.Client;
  let n = 0;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 5);
    writer = new pg.Client({ connectionString: database.url });
    await writer.connect();
    await insertSite(handle.db, { id: 'snap-01', name: 'Snapshot' });
  });
  after(async () => {
    await writer?.end();
    await handle?.close();
    await database?.drop();
  });

  const newDevice = async (rackId?: string) =>
    insertDevice(handle.db, {
      name: `snap-dev-${++n}`,
      siteId: 'snap-01',
      nodeType: 'gb200_compute_tray',
      bmcUrl: `https://10.9.0.${n}`,
      credentialRef: 'bmc/default',
      rackId,
      position: n,
    });

  /** Runs `read` while `table` is locked; once `read` waits on the lock, commits `change` and lets `read` go on. */
  async function commitDuring<T>(table: string, read: () => Promise<T>, change: (c: pg.Client) => Promise<unknown>) {
    await writer.query('begin');
    await writer.query(`lock table ${table} in access exclusive mode`);
    let failed: unknown;
    const reading = read();
    reading.catch((err: unknown) => (failed = err));
    try {
      for (let i = 0; ; i++) {
        // Within a transaction Postgres reads the activity view once and keeps it: each poll clears that first.
        await writer.query('select pg_stat_clear_snapshot()');
        const { rows } = await writer.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid()
             and datname = current_database()`,
        );
        if (rows[0]!.n > 0) break;
        if (failed) throw failed;
        if (i > 500) throw new Error(`no read waited on ${table}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      await change(writer);
      await writer.query('commit');
    } catch (err) {
      await writer.query('rollback');
      throw err;
    }
    return reading;
  }

  it('a device shows its BMC URL and the issue that cleared it from the same commit', async () => {
    const device = await newDevice();
    const detail = await commitDuring(
      'inventory_issues',
      () => readDeviceDetail(handle.db, device.id),
      async (c) => {
        // What a NetBox sync commits when it finds the device's BMC address on another device too.
        await c.query('update devices set bmc_url = null where id = $1', [device.id]);
        await c.query(
          `insert into inventory_issues (object_type, netbox_id, device_id, code, message)
             values ('dcim.device', $1, $2, 'duplicate_ip', 'the BMC address is on two devices')`,
          [1000 + n, device.id],
        );
      },
    );
    assert.ok(detail);
    assert.equal(detail.device.bmcUrl, device.bmcUrl, 'the snapshot predates the commit');
    assert.deepEqual(detail.issues, [], 'so it holds no issue from that commit either');

    const now = (await readDeviceDetail(handle.db, device.id))!;
    assert.equal(now.device.bmcUrl, null);
    assert.deepEqual(
      now.issues.map((i) => i.code),
      ['duplicate_ip'],
    );
  });

  it("a rack's elevation and its lifecycle counts come from the same commit", async () => {
    const { rows } = await handle.pool.query<{ id: string }>(
      `insert into racks (site_id, name) values ('snap-01', 'snap-rack') returning id`,
    );
    const rackId = rows[0]!.id;
    await newDevice(rackId);
    await newDevice(rackId);
    const rack = await commitDuring(
      'device_conditions',
      () => readRackDetail(handle.db, rackId),
      (c) =>
        c.query(
          `insert into devices (name, site_id, node_type, bmc_url, credential_ref, rack_id, position)
             values ('snap-late', 'snap-01', 'gb200_compute_tray', 'https://10.9.1.1', 'bmc/default', $1, 40)`,
          [rackId],
        ),
    );
    assert.ok(rack);
    const counted = Object.values(rack.summary.byLifecycle).reduce((a, b) => a + b, 0);
    assert.equal(rack.devices.length, 2);
    assert.equal(counted, rack.devices.length, 'the counts cover exactly the devices drawn');
    assert.equal((await readRackDetail(handle.db, rackId))!.devices.length, 3);
  });

  it('a device or rack that does not exist reads as undefined', async () => {
    assert.equal(await readDeviceDetail(handle.db, '00000000-0000-4000-8000-000000000000'), undefined);
    assert.equal(await readRackDetail(handle.db, '00000000-0000-4000-8000-000000000000'), undefined);
  });
});

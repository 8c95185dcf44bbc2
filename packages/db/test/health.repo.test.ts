import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { credentialsRefusedReading, unreachableReading, type HealthReading } from '@fleet/domain';
import {
  applyHealthReadings,
  connectDb,
  deviceHistory,
  getDeviceHealth,
  insertDevice,
  insertSite,
  listConditions,
  listObservationTargets,
  type DbHandle,
} from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

const healthy: HealthReading = { reachable: true, credentialsOk: true, powerState: 'On', faults: [] };
const gpuOffBus: HealthReading = {
  ...healthy,
  faults: [{ class: 'gpu', component: 'GPU_SXM_3', severity: 'Critical', message: 'GPU fell off the bus' }],
};

describe('health readings from a site observer (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let n = 0;
  let t = Date.parse('2026-12-04T10:00:00Z');
  const at = () => new Date((t += 60_000));

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 5);
    await insertSite(handle.db, { id: 'hl-01', name: 'Health' });
    await insertSite(handle.db, { id: 'hl-02', name: 'Elsewhere' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const newDevice = async (siteId = 'hl-01') =>
    (
      await insertDevice(handle.db, {
        name: `dev-${++n}`,
        siteId,
        nodeType: 'gb200_compute_tray',
        bmcUrl: `https://10.0.0.${n}`,
        credentialRef: 'bmc/default',
      })
    ).id;
  const deliver = (siteId: string, readings: { deviceId: string; reading: HealthReading; observedAt?: Date }[]) =>
    handle.db.transaction((tx) =>
      applyHealthReadings(
        tx,
        siteId,
        readings.map((r) => ({ observedAt: at(), ...r })),
      ),
    );
  const conditionsOf = async (id: string) =>
    Object.fromEntries((await listConditions(handle.db, id)).map((c) => [c.type, `${c.status}/${c.reason}`]));

  it('a first reading sets the health conditions and the power state; a repeat only counts', async () => {
    const id = await newDevice();
    const first = await deliver('hl-01', [{ deviceId: id, reading: healthy }]);
    assert.deepEqual(first, { applied: 1, changed: 1, stale: 0, unknown: [], transitions: 3, faulty: [] });
    assert.deepEqual(await conditionsOf(id), {
      BMCReachable: 'True/BmcAnswered',
      CredentialsVerified: 'True/LoggedIn',
      Healthy: 'True/NoFault',
    });
    const { rows } = await handle.pool.query(`select power_state from devices where id = $1`, [id]);
    assert.equal(rows[0].power_state, 'On');
    const again = await deliver('hl-01', [{ deviceId: id, reading: healthy }]);
    assert.deepEqual(again, { applied: 1, changed: 0, stale: 0, unknown: [], transitions: 0, faulty: [] });
    assert.equal((await getDeviceHealth(handle.db, id))!.observations, 2);
  });

  it('a fault turns Healthy False, its class the reason, in the history; confirming it only counts', async () => {
    const id = await newDevice();
    await deliver('hl-01', [{ deviceId: id, reading: healthy }]);
    const fault = await deliver('hl-01', [{ deviceId: id, reading: gpuOffBus }]);
    assert.equal(fault.transitions, 1);
    assert.deepEqual(fault.faulty, [id]);
    assert.equal((await conditionsOf(id))['Healthy'], 'False/GpuFault');
    await deliver('hl-01', [{ deviceId: id, reading: gpuOffBus }]);
    const health = (await getDeviceHealth(handle.db, id))!;
    assert.equal(health.observations, 2);
    assert.deepEqual(
      health.faults.map((f) => f.component),
      ['GPU_SXM_3'],
    );
    const history = await deviceHistory(handle.db, id, { limit: 10, axis: ['health'] });
    const moves = history.items.filter((h) => h.conditionType === 'Healthy').map((h) => h.toState);
    assert.deepEqual(moves, ['False', 'True'], 'newest first: one transition each way, none for the repeat');
    assert.ok(history.items.every((h) => h.writer === 'satellite'));
  });

  it('an unreachable BMC: BMCReachable False, credentials Unknown; a refusal says CredentialsRefused', async () => {
    const a = await newDevice();
    const b = await newDevice();
    await deliver('hl-01', [
      { deviceId: a, reading: unreachableReading('connect ETIMEDOUT') },
      { deviceId: b, reading: credentialsRefusedReading('HTTP 401') },
    ]);
    assert.deepEqual(await conditionsOf(a), {
      BMCReachable: 'False/BmcUnreachable',
      CredentialsVerified: 'Unknown/BmcUnreachable',
      Healthy: 'False/BmcUnreachable',
    });
    assert.equal((await conditionsOf(b))['CredentialsVerified'], 'False/CredentialsRefused');
  });

  it('an older reading than the stored one is ignored; ids that are no device of the site are named', async () => {
    const id = await newDevice();
    const other = await newDevice('hl-02');
    await deliver('hl-01', [{ deviceId: id, reading: gpuOffBus }]);
    const stale = await deliver('hl-01', [
      { deviceId: id, reading: healthy, observedAt: new Date('2020-01-01T00:00:00Z') },
      { deviceId: other, reading: healthy },
      { deviceId: 'not-a-uuid\u0000', reading: healthy },
      { deviceId: randomUUID(), reading: healthy },
    ]);
    assert.equal(stale.stale, 1);
    assert.equal(stale.applied, 0);
    assert.equal(stale.unknown.length, 3);
    assert.ok(stale.unknown.includes(other), "another site's device is not this site's to report");
    assert.equal((await conditionsOf(id))['Healthy'], 'False/GpuFault');
    assert.equal(await getDeviceHealth(handle.db, other), undefined);
  });

  it('observation targets are the devices with a node type, a BMC and a credential reference, by id', async () => {
    const bare = (await insertDevice(handle.db, { name: `bare-${++n}`, siteId: 'hl-01' })).id;
    const all = await listObservationTargets(handle.db, 'hl-01', 1000);
    assert.ok(!all.some((d) => d.deviceId === bare));
    assert.ok(all.every((d) => d.nodeType && d.bmcUrl && d.credentialRef));
    const sorted = [...all].map((d) => d.deviceId).sort();
    assert.deepEqual(
      all.map((d) => d.deviceId),
      sorted,
    );
    const page = await listObservationTargets(handle.db, 'hl-01', 2, all[1]!.deviceId);
    assert.deepEqual(
      page.map((d) => d.deviceId),
      sorted.slice(2, 4),
    );
  });
});

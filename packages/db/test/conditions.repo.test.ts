import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import {
  axisWriters,
  AxisWriterRefused,
  ConditionReportInvalid,
  conditionTypes,
  conditionWriter,
  type ConditionStatus,
} from '@fleet/domain';
import {
  connectDb,
  deviceHistory,
  insertDevice,
  insertSite,
  listConditions,
  setCondition,
  type DbHandle,
} from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

describe('device conditions repository (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let n = 0;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 6);
    await insertSite(handle.db, { id: 'cond-01', name: 'Conditions' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const newDevice = async () => (await insertDevice(handle.db, { name: `dev-${++n}`, siteId: 'cond-01' })).id;
  const bmc = (deviceId: string, status: ConditionStatus, reason: string, more: { observedGeneration?: number } = {}) =>
    setCondition(handle.db, { deviceId, type: 'BMCReachable', status, reason, writer: 'satellite', ...more });
  const history = async (deviceId: string) => (await deviceHistory(handle.db, deviceId, { limit: 100 })).items;

  it('refuses every writer but the owner of each condition type, and stores nothing', async () => {
    const id = await newDevice();
    for (const type of conditionTypes)
      for (const writer of axisWriters.filter((w) => w !== conditionWriter(type)))
        await assert.rejects(
          setCondition(handle.db, { deviceId: id, type, status: 'True', reason: 'Test', writer }),
          (e: unknown) => e instanceof AxisWriterRefused && e.writer === writer && e.owner === conditionWriter(type),
          `${writer} writing ${type}`,
        );
    assert.deepEqual(await listConditions(handle.db, id), []);
    assert.deepEqual(await history(id), []);
  });

  it('lets each owner write its own condition types', async () => {
    const id = await newDevice();
    for (const type of conditionTypes)
      await setCondition(handle.db, {
        deviceId: id,
        type,
        status: 'Unknown',
        reason: 'NotChecked',
        writer: conditionWriter(type),
      });
    assert.deepEqual(
      (await listConditions(handle.db, id)).map((c) => c.type),
      [...conditionTypes].sort(),
    );
  });

  it('moves lastTransitionTime only when the status changes, and records each status change', async () => {
    const id = await newDevice();
    const first = await bmc(id, 'True', 'RedfishAnswered', { observedGeneration: 1 });
    assert.equal(first?.transitioned, true);
    const t0 = first!.condition.lastTransitionTime;

    await sleep(20);
    const same = await bmc(id, 'True', 'SessionReused', { observedGeneration: 2 });
    assert.equal(same?.transitioned, false);
    let [stored] = await listConditions(handle.db, id);
    assert.equal(stored!.reason, 'SessionReused');
    assert.equal(stored!.observedGeneration, 2);
    assert.equal(stored!.lastTransitionTime.getTime(), t0.getTime(), 'a new reason alone keeps lastTransitionTime');

    await sleep(20);
    const down = await bmc(id, 'False', 'ConnectionRefused', { observedGeneration: 3 });
    assert.equal(down?.transitioned, true);
    [stored] = await listConditions(handle.db, id);
    assert.equal(stored!.status, 'False');
    assert.ok(stored!.lastTransitionTime.getTime() > t0.getTime(), 'a status change moves lastTransitionTime');

    const rows = await history(id);
    assert.deepEqual(
      rows.map((r) => [r.axis, r.conditionType, r.fromState, r.toState, r.writer, r.reason]),
      [
        ['health', 'BMCReachable', 'True', 'False', 'satellite', 'ConnectionRefused'],
        ['health', 'BMCReachable', null, 'True', 'satellite', 'RedfishAnswered'],
      ],
    );
    assert.equal(rows[0]!.at.getTime(), stored!.lastTransitionTime.getTime());
  });

  it('ignores a report about an older generation than the stored one', async () => {
    const id = await newDevice();
    await bmc(id, 'True', 'RedfishAnswered', { observedGeneration: 5 });
    const late = await bmc(id, 'False', 'ConnectionRefused', { observedGeneration: 4 });
    assert.equal(late?.stale, true);
    const [stored] = await listConditions(handle.db, id);
    assert.equal(stored!.status, 'True');
    assert.equal(stored!.observedGeneration, 5);
    assert.equal((await history(id)).length, 1);
  });

  it('refuses a malformed report before writing anything', async () => {
    const id = await newDevice();
    await assert.rejects(bmc(id, 'True', 'not camel case'), (e: unknown) => e instanceof ConditionReportInvalid);
    await assert.rejects(bmc(id, 'Maybe' as ConditionStatus, 'Test'), /True, False or Unknown/);
    assert.deepEqual(await listConditions(handle.db, id), []);
  });

  it('serialises concurrent first reports: one creates the condition, the other changes it', async () => {
    const id = await newDevice();
    const results = await Promise.all([bmc(id, 'True', 'RedfishAnswered'), bmc(id, 'False', 'Timeout')]);
    assert.ok(results.every((r) => r?.transitioned));
    const rows = (await history(id)).reverse();
    assert.equal(rows.length, 2);
    assert.equal(rows[0]!.fromState, null);
    assert.equal(rows[1]!.fromState, rows[0]!.toState, 'the second report compared against the first');
    const [stored] = await listConditions(handle.db, id);
    assert.equal(stored!.status, rows[1]!.toState);
  });

  it('answers undefined for a device that does not exist', async () => {
    assert.equal(await bmc(randomUUID(), 'True', 'RedfishAnswered'), undefined);
  });
});

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import {
  insertDevice,
  insertSite,
  racks,
  setCondition,
  setLifecycle,
  type DbHandle,
  type SetConditionInput,
} from '@fleet/db';
import {
  conditionStatuses,
  conditionTypes,
  fleetLifecycleStates,
  type ConditionStatus,
  type ConditionType,
  type FleetLifecycleState,
} from '@fleet/domain';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// Fleet's lifecycle and the conditions of each device (docs/lifecycle.md) in the device and rack reads, the device
// list's filters on them, a device's history, and the domain's refusals as HTTP errors; seeded through the
// repositories that own the writes, against Postgres.

type Condition = { type: string; status: string; reason: string; message: string; last_transition_time: string };
type Device = {
  id: string;
  name: string;
  lifecycle_state: string;
  lifecycle: { state: string; since: string };
  conditions: Condition[];
  created_at: string;
};
type Transition = {
  id: number;
  axis: string;
  condition_type: string | null;
  from: string | null;
  to: string;
  writer: string;
  job_id: string | null;
  reason: string;
  message: string | null;
  at: string;
};

const writerOf: Record<ConditionType, SetConditionInput['writer']> = {
  BMCReachable: 'satellite',
  CredentialsVerified: 'satellite',
  InventoryMatchesProfile: 'netbox-agent',
  FirmwareCompliant: 'firmware-refresh',
  BurnInPassed: 'burn-in-workflow',
  Schedulable: 'lifecycle-workflow',
  Healthy: 'satellite',
};

describe('device lifecycle and conditions in the hub API', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let token = '';
  const logLines: { level: number; msg: string }[] = [];
  const ids: Record<string, string> = {};
  const rackIds: Record<string, string> = {};
  const enrolJob = randomUUID();

  const move = async (name: string, ...path: FleetLifecycleState[]) => {
    for (const to of path)
      await setLifecycle(handle.db, {
        deviceId: ids[name]!,
        to,
        writer: 'lifecycle-workflow',
        jobId: enrolJob,
        reason: 'Test',
      });
  };
  const report = (name: string, type: ConditionType, status: ConditionStatus, reason = 'Observed', message = '') =>
    setCondition(handle.db, { deviceId: ids[name]!, type, status, reason, message, writer: writerOf[type] });

  before(async () => {
    const log = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
        done();
      },
    });
    hub = await startTestHub({ log: pino({ level: 'error' }, log) });
    ({ handle, app } = hub);
    token = hub.tokens.viewer;
    const db = handle.db;

    // Routes that write the axes as later lifecycle routes will, letting the repositories' refusals propagate.
    app.post<{ Body: { device_id: string; to: FleetLifecycleState } }>('/test/lifecycle', async (req) =>
      setLifecycle(db, {
        deviceId: req.body.device_id,
        to: req.body.to,
        writer: 'lifecycle-workflow',
        jobId: randomUUID(),
        reason: 'Test',
      }),
    );
    app.post<{ Body: { device_id: string; writer: string; reason: string } }>('/test/condition', async (req) =>
      setCondition(db, {
        deviceId: req.body.device_id,
        type: 'BurnInPassed',
        status: 'True',
        reason: req.body.reason,
        writer: req.body.writer,
      }),
    );

    await insertSite(db, { id: 'lab', name: 'Lab' });
    await insertSite(db, { id: 'lab2', name: 'Lab 2' });
    for (const name of ['r1', 'r2']) {
      const [rack] = await db.insert(racks).values({ siteId: 'lab', name }).returning();
      rackIds[name] = rack!.id;
    }
    const place: Record<string, [string, string | null]> = {
      a1: ['lab', 'r1'],
      a2: ['lab', 'r1'],
      a3: ['lab', 'r1'],
      a4: ['lab', 'r1'],
      gone: ['lab', 'r1'],
      b1: ['lab', 'r2'],
      c1: ['lab2', null],
    };
    for (const [name, [siteId, rack]] of Object.entries(place))
      ids[name] = (await insertDevice(db, { name, siteId, rackId: rack ? rackIds[rack]! : null })).id;

    await move('a1', 'enrolling', 'enrolled', 'burning_in', 'certified');
    await report('a1', 'BMCReachable', 'True');
    await report('a1', 'CredentialsVerified', 'True');
    await report('a1', 'BurnInPassed', 'True', 'AllTestsPassed', 'dcgm, nccl and hpl passed');
    await move('a2', 'enrolling', 'failed');
    await report('a2', 'BMCReachable', 'False', 'ConnectionRefused', 'https://10.0.0.2: connection refused');
    await report('a2', 'CredentialsVerified', 'Unknown', 'BMCUnreachable');
    await report('a3', 'BurnInPassed', 'False', 'NcclBandwidthLow');
    await move('a4', 'enrolling');
    for (const status of ['True', 'False', 'True'] as const) await report('a4', 'BMCReachable', status);
    await report('a4', 'BurnInPassed', 'False', 'DcgmDiagFailed');
    await report('gone', 'BurnInPassed', 'False', 'DcgmDiagFailed');
    await handle.pool.query('update devices set deleted_at = now() where id = $1', [ids['gone']]);
    await move('b1', 'quarantined');
    await report('b1', 'BurnInPassed', 'Unknown', 'NotRun');
  });
  after(() => hub.close());

  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: res.json() };
  };
  const names = async (query: string) =>
    ((await get(`/v1/devices?${query}`)).body.items as Device[]).map((d) => d.name).sort();

  it("shows Fleet's lifecycle, since its last move, beside NetBox's status, and the conditions", async () => {
    const a1: Device = (await get(`/v1/devices/${ids['a1']}`)).body;
    assert.equal(a1.lifecycle_state, 'active', "NetBox's status is untouched");
    assert.equal(a1.lifecycle.state, 'certified');
    const moves = (await get(`/v1/devices/${ids['a1']}/history?axis=lifecycle`)).body.items as Transition[];
    assert.equal(a1.lifecycle.since, moves[0]!.at, 'since the last move, not the condition reports after it');
    assert.deepEqual(
      a1.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ['BMCReachable', 'True', 'Observed', ''],
        ['BurnInPassed', 'True', 'AllTestsPassed', 'dcgm, nccl and hpl passed'],
        ['CredentialsVerified', 'True', 'Observed', ''],
      ],
    );
    const c1: Device = (await get(`/v1/devices/${ids['c1']}`)).body;
    assert.deepEqual([c1.lifecycle, c1.conditions], [{ state: 'discovered', since: c1.created_at }, []]);
    // A condition's transition time moves with its status only: a4's BMCReachable went True, False, True.
    const a4: Device = (await get(`/v1/devices/${ids['a4']}`)).body;
    const health = (await get(`/v1/devices/${ids['a4']}/history?axis=health`)).body.items as Transition[];
    assert.equal(a4.conditions.find((c) => c.type === 'BMCReachable')!.last_transition_time, health[0]!.at);
    // The list shows the same (inventory.test.ts pins the list to the view field for field).
    const listed = ((await get('/v1/devices?site_id=lab&limit=100')).body.items as Device[]).find(
      (d) => d.name === 'a1',
    );
    assert.deepEqual([listed?.lifecycle, listed?.conditions], [a1.lifecycle, a1.conditions]);
  });

  it('filters by Fleet lifecycle state and by condition status, repeated for OR, with the other filters', async () => {
    assert.deepEqual(await names('lifecycle=certified&lifecycle=failed'), ['a1', 'a2']);
    assert.deepEqual(await names('lifecycle=discovered'), ['a3', 'c1'], 'deleted devices are not listed');
    assert.deepEqual(await names('lifecycle=in_service'), []);
    assert.deepEqual(await names('condition=BurnInPassed=False'), ['a3', 'a4']);
    assert.deepEqual(await names('condition=BurnInPassed=False&condition=BMCReachable=False'), ['a2', 'a3', 'a4']);
    assert.deepEqual(await names('condition=BurnInPassed=Unknown'), ['b1']);
    assert.deepEqual(await names('condition=Schedulable=True'), [], 'no device reported the condition');
    assert.deepEqual(await names(`condition=BurnInPassed=False&lifecycle=enrolling&rack_id=${rackIds['r1']}`), ['a4']);
    assert.deepEqual(await names(`condition=BMCReachable=True&site_id=lab2`), []);
    // Keyset paging holds with a condition filter: one device per page, each once.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: Device[]; next_cursor: string | null } } = await get(
        `/v1/devices?condition=BMCReachable=True&condition=CredentialsVerified=True&limit=1` +
          (cursor ? `&cursor=${cursor}` : ''),
      );
      seen.push(...page.body.items.map((d) => d.name));
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ['a1', 'a4']);
  });

  it('answers 400 naming a bad lifecycle or condition filter and listing the allowed values', async () => {
    const cases: [string, string, readonly string[]][] = [
      ['lifecycle=melted', 'query.lifecycle.0', fleetLifecycleStates],
      ['lifecycle=active', 'query.lifecycle.0', fleetLifecycleStates],
      ['condition=BurnInPassed=False&condition=Burnt=False', 'query.condition.1', conditionTypes],
      ['condition=BurnInPassed=Maybe', 'query.condition.0', conditionStatuses],
      ['condition=BurnInPassed', 'query.condition.0', ['Type=Status']],
      ['condition=BurnInPassed=False=True', 'query.condition.0', ['Type=Status']],
    ];
    for (const [query, field, allowed] of cases) {
      const res = await get(`/v1/devices?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.code, 'INVALID_ARGUMENT');
      assert.equal(res.body.error.details[0].field, field, query);
      for (const value of allowed) assert.ok(res.body.error.message.includes(value), `${query}: ${value}`);
    }
  });

  it("pages a device's history newest first, filtered by axis", async () => {
    const all: Transition[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: { items: Transition[]; next_cursor: string | null } } = await get(
        `/v1/devices/${ids['a4']}/history?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      assert.equal(res.status, 200);
      assert.ok(res.body.items.length <= 2);
      all.push(...res.body.items);
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    // a4: one lifecycle move, BMCReachable True → False → True, BurnInPassed False; newest first.
    assert.equal(pages, 3);
    assert.deepEqual(
      all.map((t) => [t.axis, t.condition_type, t.from, t.to, t.writer, t.reason]),
      [
        ['burnin', 'BurnInPassed', null, 'False', 'burn-in-workflow', 'DcgmDiagFailed'],
        ['health', 'BMCReachable', 'False', 'True', 'satellite', 'Observed'],
        ['health', 'BMCReachable', 'True', 'False', 'satellite', 'Observed'],
        ['health', 'BMCReachable', null, 'True', 'satellite', 'Observed'],
        ['lifecycle', null, 'discovered', 'enrolling', 'lifecycle-workflow', 'Test'],
      ],
    );
    assert.deepEqual(
      all.map((t) => t.id),
      all.map((t) => t.id).sort((a, b) => b - a),
    );
    assert.equal(all.at(-1)!.job_id, enrolJob);
    assert.equal(all[0]!.job_id, null);
    const { rows } = await handle.pool.query('select count(*)::int as n from device_transitions where device_id = $1', [
      ids['a4'],
    ]);
    assert.equal(all.length, rows[0].n);

    const lifecycleOnly = (await get(`/v1/devices/${ids['a1']}/history?axis=lifecycle`)).body;
    assert.deepEqual(
      (lifecycleOnly.items as Transition[]).map((t) => t.to),
      ['certified', 'burning_in', 'enrolled', 'enrolling'],
    );
    assert.equal(lifecycleOnly.next_cursor, null);
    const two = (await get(`/v1/devices/${ids['a1']}/history?axis=health&axis=burnin`)).body.items as Transition[];
    assert.deepEqual(two.map((t) => t.condition_type).sort(), ['BMCReachable', 'BurnInPassed', 'CredentialsVerified']);
    assert.deepEqual((await get(`/v1/devices/${ids['c1']}/history`)).body, { items: [], next_cursor: null });
    // A deleted device keeps its history.
    assert.equal((await get(`/v1/devices/${ids['gone']}/history`)).body.items.length, 1);
  });

  it('answers 404 for an unknown device and 400 for a bad axis or cursor on the history', async () => {
    const missing = await get(`/v1/devices/${randomUUID()}/history`);
    assert.equal(missing.status, 404);
    for (const [query, field] of [
      ['axis=mood', 'query.axis.0'],
      ['cursor=!!', 'query.cursor'],
      [`cursor=${Buffer.from('["x"]').toString('base64url')}`, 'query.cursor'],
      ['limit=0', 'query.limit'],
    ]) {
      const res = await get(`/v1/devices/${ids['a1']}/history?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.details[0].field, field, query);
    }
    assert.match((await get(`/v1/devices/${ids['a1']}/history?axis=mood`)).body.error.message, /lifecycle/);
  });

  it("summarises a rack's live devices by lifecycle state and by conditions not True, in list and detail", async () => {
    const listed = (await get('/v1/racks?site_id=lab')).body.items as {
      id: string;
      name: string;
      device_count: number;
      device_summary: unknown;
    }[];
    const r1 = listed.find((r) => r.name === 'r1')!;
    assert.equal(r1.device_count, 4);
    const r1Summary = {
      by_lifecycle: { discovered: 1, enrolling: 1, certified: 1, failed: 1 },
      conditions_not_true: {
        BMCReachable: { False: 1 },
        CredentialsVerified: { Unknown: 1 },
        BurnInPassed: { False: 2 },
      },
    };
    assert.deepEqual(r1.device_summary, r1Summary);
    // In the lifecycle's and the condition table's order.
    assert.equal(JSON.stringify(r1.device_summary), JSON.stringify(r1Summary));
    assert.deepEqual(listed.find((r) => r.name === 'r2')!.device_summary, {
      by_lifecycle: { quarantined: 1 },
      conditions_not_true: { BurnInPassed: { Unknown: 1 } },
    });
    const detail = (await get(`/v1/racks/${rackIds['r1']}`)).body;
    assert.deepEqual(detail.device_summary, r1Summary);
    const [empty] = await handle.db.insert(racks).values({ siteId: 'lab2', name: 'empty' }).returning();
    assert.deepEqual((await get(`/v1/racks/${empty!.id}`)).body.device_summary, {
      by_lifecycle: {},
      conditions_not_true: {},
    });
  });

  it("answers the domain's refusals: an illegal move 409 naming the current state, a foreign writer 403", async () => {
    const post = (url: string, payload: object) => app.inject({ method: 'POST', url, payload });
    const illegal = await post('/test/lifecycle', { device_id: ids['a1'], to: 'enrolling' });
    assert.equal(illegal.statusCode, 409);
    assert.deepEqual(illegal.json(), {
      error: {
        code: 'CONFLICT',
        message:
          'device is certified: it cannot move to enrolling (it may move to burning_in, in_service, ' +
          'quarantined, decommissioned)',
      },
    });
    const legal = await post('/test/lifecycle', { device_id: ids['a1'], to: 'in_service' });
    assert.equal(legal.statusCode, 200);
    assert.equal((await get(`/v1/devices/${ids['a1']}`)).body.lifecycle.state, 'in_service');

    const foreign = await post('/test/condition', { device_id: ids['a3'], writer: 'satellite', reason: 'Passed' });
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.json().error.code, 'PERMISSION_DENIED');
    assert.match(foreign.json().error.message, /satellite may not write the burnin axis: its only writer is burn-in/);
    assert.ok(
      logLines.some((l) => l.level === 50 && l.msg === 'a component wrote an axis it does not own'),
      'logged as the bug it is',
    );
    const malformed = await post('/test/condition', {
      device_id: ids['a3'],
      writer: 'burn-in-workflow',
      reason: 'not camel',
    });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().error.code, 'INVALID_ARGUMENT');
    assert.match(malformed.json().error.message, /reason must be CamelCase/);
    assert.deepEqual(await names('condition=BurnInPassed=True'), ['a1'], 'neither refused write changed anything');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createApiToken, insertDevice, insertSite, racks, type DbHandle } from '@fleet/db';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// The hub against a real Postgres, with no Temporal anywhere: everything here must
// be answered from the projection alone.

describe('hub API', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let tokens: TestHub['tokens'];
  const devices: string[] = [];

  before(async () => {
    hub = await startTestHub();
    ({ handle, app, tokens } = hub);
    await insertSite(handle.db, { id: 'lab', name: 'Lab' });
    for (let i = 0; i < 4; i++) {
      const d = await insertDevice(handle.db, {
        name: `tray-${i}`,
        siteId: 'lab',
        nodeType: 'compute_gb200_nvidia',
        bmcUrl: `http://127.0.0.1:${9000 + i}`,
        credentialRef: 'bmc/default',
      });
      devices.push(d.id);
    }
  });
  after(() => hub.close());

  const call = (
    method: 'GET' | 'POST',
    url: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) =>
    app.inject({
      method,
      url,
      headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...opts.headers },
      ...(opts.body === undefined ? {} : { payload: opts.body as object }),
    });

  const auditFor = async (requestId: string) =>
    (
      await handle.pool.query('select actor, outcome, status_code, action from audit_log where request_id = $1', [
        requestId,
      ])
    ).rows;

  it('401 without a token, 401 with an unknown one, each with a JSON error and an audit row', async () => {
    const missing = await call('POST', `/v1/devices/${devices[0]}/power`, {
      body: { action: 'on' },
      headers: { 'x-request-id': 'r-401a' },
    });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().error.code, 'UNAUTHENTICATED');
    assert.match(missing.json().error.message, /bearer token/);
    const wrong = await call('GET', '/v1/jobs', { token: 'fleet_not-a-real-token' });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json().error.code, 'UNAUTHENTICATED');
    assert.deepEqual(await auditFor('r-401a'), [
      { actor: 'anonymous', outcome: 'rejected', status_code: 401, action: 'POST /v1/devices/:id/power' },
    ]);
  });

  it('403 for a viewer token on a POST, naming the role it needs', async () => {
    const res = await call('POST', `/v1/devices/${devices[0]}/power`, {
      token: tokens.viewer,
      body: { action: 'on' },
      headers: { 'x-request-id': 'r-403' },
    });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error.code, 'PERMISSION_DENIED');
    assert.match(res.json().error.message, /operator role/);
    assert.deepEqual(await auditFor('r-403'), [
      { actor: 't-viewer', outcome: 'rejected', status_code: 403, action: 'POST /v1/devices/:id/power' },
    ]);
  });

  it('404 with a JSON error for an unknown device; 400 naming path.id for a malformed one', async () => {
    const unknown = await call('POST', '/v1/devices/00000000-0000-4000-8000-000000000000/power', {
      token: tokens.operator,
      body: { action: 'on' },
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.code, 'NOT_FOUND');
    const malformed = await call('GET', '/v1/devices/tray-1', { token: tokens.viewer });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().error.details[0].field, 'path.id');
  });

  it('400 naming body.action for an invalid action, and nothing is written', async () => {
    const before = (await handle.pool.query('select count(*)::int as n from jobs')).rows[0].n;
    const res = await call('POST', `/v1/devices/${devices[0]}/power`, {
      token: tokens.operator,
      body: { action: 'explode' },
    });
    assert.equal(res.statusCode, 400);
    const body = res.json();
    assert.equal(body.error.code, 'INVALID_ARGUMENT');
    assert.equal(body.error.details[0].field, 'body.action');
    const extra = await call('POST', `/v1/devices/${devices[0]}/power`, {
      token: tokens.operator,
      body: { action: 'on', force: true },
    });
    assert.equal(extra.statusCode, 400);
    assert.equal(extra.json().error.details[0].field, 'body');
    const noBody = await call('POST', `/v1/devices/${devices[0]}/power`, { token: tokens.operator });
    assert.equal(noBody.statusCode, 400);
    assert.equal((await handle.pool.query('select count(*)::int as n from jobs')).rows[0].n, before);
  });

  it('the same Idempotency-Key returns the same job; with another body it is a 409', async () => {
    const headers = { 'idempotency-key': 'k-1' };
    const first = await call('POST', `/v1/devices/${devices[1]}/power`, {
      token: tokens.operator,
      body: { action: 'on' },
      headers,
    });
    const again = await call('POST', `/v1/devices/${devices[1]}/power`, {
      token: tokens.operator,
      body: { action: 'on' },
      headers,
    });
    assert.equal(first.statusCode, 202);
    assert.equal(again.statusCode, 202);
    assert.equal(again.json().id, first.json().id);
    assert.equal(first.headers['location'], `/v1/jobs/${first.json().id}`);
    const other = await call('POST', `/v1/devices/${devices[1]}/power`, {
      token: tokens.operator,
      body: { action: 'off' },
      headers,
    });
    assert.equal(other.statusCode, 409);
    assert.equal(other.json().error.code, 'CONFLICT');
    const { rows } = await handle.pool.query(
      'select count(*)::int as jobs, (select count(*)::int from intents i where i.job_id = $1) as intents ' +
        'from jobs where device_id = $2',
      [first.json().id, devices[1]],
    );
    assert.deepEqual(rows[0], { jobs: 1, intents: 1 });
  });

  it('a second operation on a busy device is a 409 naming the active job', async () => {
    const first = await call('POST', `/v1/devices/${devices[2]}/power`, {
      token: tokens.operator,
      body: { action: 'on' },
    });
    assert.equal(first.statusCode, 202);
    const second = await call('POST', `/v1/devices/${devices[2]}/power`, {
      token: tokens.operator,
      body: { action: 'off' },
    });
    assert.equal(second.statusCode, 409);
    assert.match(second.json().error.message, new RegExp(first.json().id));
  });

  it('cancelling a queued job records a cancel intent and answers 202 cancelling', async () => {
    const job = (
      await call('POST', `/v1/devices/${devices[3]}/power`, { token: tokens.operator, body: { action: 'on' } })
    ).json();
    const res = await call('POST', `/v1/jobs/${job.id}/cancel`, { token: tokens.operator });
    assert.equal(res.statusCode, 202);
    assert.equal(res.json().state, 'cancelling');
    const { rows } = await handle.pool.query('select kind, status from intents where job_id = $1 order by id', [
      job.id,
    ]);
    assert.deepEqual(rows, [
      { kind: 'start', status: 'pending' },
      { kind: 'cancel', status: 'pending' },
    ]);
  });

  it('lists jobs newest first with keyset pagination and validated filters', async () => {
    const page1 = await call('GET', '/v1/jobs?limit=2', { token: tokens.viewer });
    assert.equal(page1.statusCode, 200);
    const b1 = page1.json();
    assert.equal(b1.items.length, 2);
    assert.ok(b1.next_cursor);
    const page2 = (await call('GET', `/v1/jobs?limit=2&cursor=${b1.next_cursor}`, { token: tokens.viewer })).json();
    const all = (await call('GET', '/v1/jobs?limit=1000', { token: tokens.viewer })).json();
    assert.deepEqual(
      [...b1.items, ...page2.items].map((j: { id: string }) => j.id),
      all.items.slice(0, 4).map((j: { id: string }) => j.id),
    );
    const queued = (await call('GET', '/v1/jobs?state=queued&state=cancelling', { token: tokens.viewer })).json();
    assert.ok(queued.items.every((j: { state: string }) => ['queued', 'cancelling'].includes(j.state)));
    for (const [query, field] of [
      ['cursor=nonsense', 'query.cursor'],
      ['limit=0', 'query.limit'],
      ['limit=5000', 'query.limit'],
      ['state=exploded', 'query.state.0'],
      ['colour=red', 'query'],
    ] as const) {
      const res = await call('GET', `/v1/jobs?${query}`, { token: tokens.viewer });
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.json().error.details[0].field, field, query);
    }
  });

  it('registering a device validates every field and names each bad one', async () => {
    const res = await call('POST', '/v1/devices', {
      token: tokens.admin,
      body: { name: '', site_id: 'lab', node_type: 'toaster', bmc_url: 'ftp://x', credential_ref: 'pass word' },
    });
    assert.equal(res.statusCode, 400);
    const fields = res
      .json()
      .error.details.map((d: { field: string }) => d.field)
      .sort();
    assert.deepEqual(fields, ['body.bmc_url', 'body.credential_ref', 'body.name', 'body.node_type']);
    const operator = await call('POST', '/v1/devices', { token: tokens.operator, body: {} });
    assert.equal(operator.statusCode, 403);
  });

  it('health needs no token; unknown routes are a JSON 404', async () => {
    assert.equal((await call('GET', '/healthz')).statusCode, 200);
    const res = await call('GET', '/v1/nothing', { token: tokens.viewer });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error.code, 'NOT_FOUND');
  });

  it(`refuses a batch that would cut power shelves under trays it also acts on, and writes nothing; trays alone are \
accepted`, async () => {
    const [rack] = await handle.db
      .insert(racks)
      .values({ siteId: 'lab', name: 'r-batch', rackType: 'gb200_nvl72' })
      .returning();
    const inRack = { siteId: 'lab', rackId: rack!.id, credentialRef: 'bmc/default' };
    await insertDevice(handle.db, {
      ...inRack,
      name: 'shelf-b',
      role: 'power-shelf',
      nodeType: 'powershelf_gb200_liteon',
      bmcUrl: 'http://127.0.0.1:9100',
    });
    for (let i = 0; i < 2; i++)
      await insertDevice(handle.db, {
        ...inRack,
        name: `tray-b${i}`,
        role: 'compute-tray',
        nodeType: 'compute_gb200_nvidia',
        bmcUrl: `http://127.0.0.1:${9101 + i}`,
      });
    const jobs = async () => (await handle.pool.query('select count(*)::int as n from jobs')).rows[0].n as number;
    const before = await jobs();
    const whole = await call('POST', '/v1/power-batches', {
      token: tokens.operator,
      body: { rack_id: rack!.id, action: 'power-cycle' },
      headers: { 'x-request-id': 'r-underfoot' },
    });
    assert.equal(whole.statusCode, 409);
    assert.equal(whole.json().error.code, 'FAILED_PRECONDITION');
    assert.match(
      whole.json().error.message,
      new RegExp(`power shelves and the trays they feed \\(rack ${rack!.id}\\).*POST /v1/racks/\\{id\\}/power`),
    );
    assert.equal(await jobs(), before);
    assert.deepEqual(await auditFor('r-underfoot'), [
      { actor: 't-operator', outcome: 'rejected', status_code: 409, action: 'POST /v1/power-batches' },
    ]);
    // Trays alone cannot lose their shelves; switching everything on takes no power away.
    const trays = await call('POST', '/v1/power-batches', {
      token: tokens.operator,
      body: { filter: { rack_id: rack!.id, role: 'compute-tray' }, action: 'power-cycle' },
    });
    assert.equal(trays.statusCode, 202, trays.body);
    assert.equal(trays.json().kind, 'batch.power');
    const on = await call('POST', '/v1/power-batches', {
      token: tokens.operator,
      body: { rack_id: rack!.id, action: 'on' },
    });
    assert.equal(on.statusCode, 202, on.body);
    assert.equal(on.json().result.refused.length, 2, 'the trays are busy with the first batch');
  });

  it(`creates without a job honour Idempotency-Key: a replay returns the first answer, racing requests create once, \
another body is a 409`, async () => {
    const headers = { 'idempotency-key': 'site-k1' };
    const first = await call('POST', '/v1/sites', {
      token: tokens.admin,
      body: { id: 'idem-1', name: 'Idempotent 1' },
      headers,
    });
    assert.equal(first.statusCode, 201);
    const again = await call('POST', '/v1/sites', {
      token: tokens.admin,
      body: { id: 'idem-1', name: 'Idempotent 1' },
      headers,
    });
    assert.equal(again.statusCode, 201, again.body);
    // The same answer, less the satellite token's secret: shown once, never kept (docs/deployment.md, "Sites").
    const secretless = { ...first.json(), satellite_token: { ...first.json().satellite_token, token: null } };
    assert.deepEqual(again.json(), secretless);
    assert.equal(again.headers['location'], '/v1/sites/idem-1');
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const other = await call('POST', '/v1/sites', {
      token: tokens.admin,
      body: { id: 'idem-2', name: 'Idempotent 2' },
      headers,
    });
    assert.equal(other.statusCode, 409);
    assert.equal(other.json().error.details[0].field, 'header.Idempotency-Key');
    assert.equal((await handle.pool.query("select count(*)::int as n from sites where id like 'idem-%'")).rows[0].n, 1);
    // Without the key the same request is a plain conflict.
    assert.equal(
      (await call('POST', '/v1/sites', { token: tokens.admin, body: { id: 'idem-1', name: 'Idempotent 1' } }))
        .statusCode,
      409,
    );

    const device = {
      name: 'idem-tray',
      site_id: 'lab',
      node_type: 'compute_gb200_nvidia',
      bmc_url: 'http://127.0.0.1:9200',
      credential_ref: 'bmc/default',
    };
    const racing = await Promise.all(
      [1, 2, 3].map(() =>
        call('POST', '/v1/devices', { token: tokens.admin, body: device, headers: { 'idempotency-key': 'dev-k1' } }),
      ),
    );
    assert.deepEqual(
      racing.map((r) => r.statusCode),
      [201, 201, 201],
      racing.map((r) => r.body).join('\n'),
    );
    assert.equal(new Set(racing.map((r) => r.json().id)).size, 1, 'one device, answered three times');
    assert.equal(racing.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 2);
    assert.equal(
      (await handle.pool.query("select count(*)::int as n from devices where name = 'idem-tray'")).rows[0].n,
      1,
    );
    assert.equal(
      (
        await handle.pool.query(
          "select count(*)::int as n from audit_log where action = 'device.create' and target = $1",
          [`device/${racing[0]!.json().id}`],
        )
      ).rows[0].n,
      1,
    );
    // Keys belong to their actor: another token's same key is its own.
    const otherActor = await call('POST', '/v1/sites', {
      token: (await createApiToken(handle.db, 't-admin-2', 'admin')).token,
      body: { id: 'idem-3', name: 'Idempotent 3' },
      headers,
    });
    assert.equal(otherActor.statusCode, 201);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { finishSiteRemovals, recordSatellitePollers, type DbHandle } from '@fleet/db';
import { satelliteCheckStaleS, satelliteSilenceLimitS } from '@fleet/domain';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// Sites added and removed through the API (docs/deployment.md, "Sites"); the agent's part is finishSiteRemovals and
// recordSatellitePollers, called here as the workflow agent calls them.

describe('sites: registration with a satellite token, removal by draining, satellite liveness', () => {
  let hub: TestHub;
  let handle: DbHandle;
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string, body?: unknown) =>
    hub.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  const device = async (siteId: string, name: string) => {
    const res = await call('POST', '/v1/devices', hub.tokens.admin, {
      name,
      site_id: siteId,
      node_type: 'compute_gb200_nvidia',
      bmc_url: 'http://127.0.0.1:9200',
      credential_ref: 'bmc/default',
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  const listedIds = async () =>
    ((await call('GET', '/v1/sites', hub.tokens.viewer)).json().items as { id: string }[]).map((s) => s.id);

  before(async () => {
    hub = await startTestHub();
    handle = hub.handle;
  });
  after(() => hub.close());

  it('POST /v1/sites answers the task queue and a satellite token for the site alone, its secret once', async () => {
    const res = await call('POST', '/v1/sites', hub.tokens.admin, { id: 'dc-a', name: 'A' });
    assert.equal(res.statusCode, 201, res.body);
    const site = res.json();
    assert.equal(site.task_queue, 'site-dc-a');
    assert.equal(site.state, 'active');
    assert.deepEqual(site.satellite, { status: 'unknown', pollers: 0, last_seen_at: null });
    assert.equal(site.satellite_token.name, 'satellite-dc-a');
    assert.equal(site.satellite_token.role, 'satellite');
    const token = (await call('GET', `/v1/tokens/${site.satellite_token.id}`, hub.tokens.admin)).json();
    assert.deepEqual([token.role, token.sites, token.state], ['satellite', ['dc-a'], 'active']);
    // The secret is a satellite's: refused a viewer's route, known (403, not 401).
    assert.equal((await call('GET', '/v1/sites', site.satellite_token.token)).statusCode, 403);
    const { rows } = await handle.pool.query('select token_hash from api_tokens where name = $1', ['satellite-dc-a']);
    assert.ok(!JSON.stringify(rows).includes(site.satellite_token.token), 'only the hash is stored');
    // A replay of its Idempotency-Key answers the same site and token, without the secret.
    const headers = { authorization: `Bearer ${hub.tokens.admin}`, 'idempotency-key': 'site-b' };
    const first = await hub.app.inject({
      method: 'POST',
      url: '/v1/sites',
      headers,
      payload: { id: 'dc-b', name: 'B' },
    });
    const again = await hub.app.inject({
      method: 'POST',
      url: '/v1/sites',
      headers,
      payload: { id: 'dc-b', name: 'B' },
    });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.match(first.json().satellite_token.token, /^fleet_/);
    assert.deepEqual(again.json(), {
      ...first.json(),
      satellite_token: { ...first.json().satellite_token, token: null },
    });
    const stored = await handle.pool.query('select response::text as r from idempotency_keys where key = $1', [
      'site-b',
    ]);
    assert.ok(!stored.rows[0].r.includes(first.json().satellite_token.token), 'the kept answer keeps no secret');
  });

  it('DELETE drains: new work on the site is a 409 naming it, other sites go on; removed when done', async () => {
    await call('POST', '/v1/sites', hub.tokens.admin, { id: 'dc-c', name: 'C' });
    const [c1, c2, a1] = [await device('dc-c', 'c1'), await device('dc-c', 'c2'), await device('dc-a', 'a1')];
    const running = await call('POST', `/v1/devices/${c1}/power`, hub.tokens.operator, { action: 'on' });
    assert.equal(running.statusCode, 202, running.body);

    assert.equal((await call('DELETE', '/v1/sites/dc-c', hub.tokens.operator)).statusCode, 403);
    const removal = await call('DELETE', '/v1/sites/dc-c', hub.tokens.admin);
    assert.equal(removal.statusCode, 202, removal.body);
    assert.equal(removal.json().state, 'draining');
    assert.ok(removal.json().draining_since);
    // Asked again: the same answer, no second audit row.
    assert.equal((await call('DELETE', '/v1/sites/dc-c', hub.tokens.admin)).json().state, 'draining');

    const refused = await call('POST', `/v1/devices/${c2}/power`, hub.tokens.operator, { action: 'on' });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(refused.json().error.message, /site dc-c is draining for removal/);
    const batch = await call('POST', '/v1/power-batches', hub.tokens.operator, { action: 'on', site_id: 'dc-c' });
    assert.equal(batch.statusCode, 409, batch.body);
    assert.match(batch.json().error.message, /site dc-c/);
    const newDevice = await call('POST', '/v1/devices', hub.tokens.admin, {
      name: 'c3',
      site_id: 'dc-c',
      node_type: 'compute_gb200_nvidia',
      bmc_url: 'http://127.0.0.1:9200',
      credential_ref: 'bmc/default',
    });
    assert.equal(newDevice.statusCode, 409, newDevice.body);
    assert.equal(
      (await call('POST', `/v1/devices/${a1}/power`, hub.tokens.operator, { action: 'on' })).statusCode,
      202,
    );

    // The agent's check: the running job holds the site.
    assert.deepEqual(await finishSiteRemovals(handle.db, 'workflow-agent'), []);
    assert.ok((await listedIds()).includes('dc-c'));
    await handle.pool.query(`update jobs set state = 'succeeded', finished_at = now() where id = $1`, [
      running.json().id,
    ]);
    const [removed] = await finishSiteRemovals(handle.db, 'workflow-agent');
    assert.equal(removed?.siteId, 'dc-c');
    assert.equal(removed?.revokedTokenIds.length, 1);
    assert.deepEqual(await finishSiteRemovals(handle.db, 'workflow-agent'), [], 'removed once');

    assert.ok(!(await listedIds()).includes('dc-c'), 'gone from the list');
    assert.ok((await listedIds()).includes('dc-a'));
    const gone = await call('GET', '/v1/sites/dc-c', hub.tokens.viewer);
    assert.equal(gone.json().state, 'removed');
    assert.equal((await call('DELETE', '/v1/sites/dc-c', hub.tokens.admin)).statusCode, 404);
    assert.equal((await call('GET', `/v1/jobs/${running.json().id}`, hub.tokens.viewer)).statusCode, 200);
    const token = (await call('GET', `/v1/tokens/${removed!.revokedTokenIds[0]}`, hub.tokens.admin)).json();
    assert.deepEqual([token.name, token.state, token.revoked_by], ['satellite-dc-c', 'revoked', 'workflow-agent']);
    const audit = await handle.pool.query<{ action: string; actor: string }>(
      `select action, actor from audit_log where target = 'site/dc-c' order by id`,
    );
    assert.deepEqual(
      audit.rows.map((r) => [r.action, r.actor]),
      [
        ['site.create', 't-admin'],
        ['site.remove', 't-admin'],
        ['site.removed', 'workflow-agent'],
      ],
    );
    assert.equal((await call('POST', '/v1/sites', hub.tokens.admin, { id: 'dc-c', name: 'C' })).statusCode, 409);
  });

  it('satellite: connected within the silence limit, disconnected past it, unknown without a fresh check', async () => {
    await call('POST', '/v1/sites', hub.tokens.admin, { id: 'dc-d', name: 'D' });
    const now = Date.now();
    const status = async (id: string) => (await call('GET', `/v1/sites/${id}`, hub.tokens.viewer)).json().satellite;
    await recordSatellitePollers(
      handle.db,
      [
        { siteId: 'dc-a', pollers: 3, lastSeenAt: new Date(now - 5_000) },
        { siteId: 'dc-b', pollers: 2, lastSeenAt: new Date(now - (satelliteSilenceLimitS + 5) * 1000) },
        { siteId: 'dc-d', pollers: 0, lastSeenAt: null },
      ],
      new Date(now),
    );
    assert.deepEqual(await status('dc-a'), {
      status: 'connected',
      pollers: 3,
      last_seen_at: new Date(now - 5_000).toISOString(),
    });
    assert.equal((await status('dc-b')).status, 'disconnected');
    assert.equal((await status('dc-d')).status, 'disconnected');
    const list = (await call('GET', '/v1/sites', hub.tokens.viewer)).json().items as {
      id: string;
      satellite: { status: string };
    }[];
    assert.deepEqual(
      list.map((s) => [s.id, s.satellite.status]),
      [
        ['dc-a', 'connected'],
        ['dc-b', 'disconnected'],
        ['dc-d', 'disconnected'],
      ],
    );
    // An old check (no agent checks any more) says nothing of now.
    await recordSatellitePollers(
      handle.db,
      [{ siteId: 'dc-a', pollers: 3, lastSeenAt: new Date(now) }],
      new Date(now - (satelliteCheckStaleS + 5) * 1000),
    );
    assert.equal((await status('dc-a')).status, 'unknown');
  });
});

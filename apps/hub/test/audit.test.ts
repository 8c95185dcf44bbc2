import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// GET /v1/audit over the rows real requests leave: filters, newest first, keyset pages.
describe('GET /v1/audit', () => {
  let hub: TestHub;
  let between = '';

  const call = (method: 'GET' | 'POST', url: string, token: string, body?: object) =>
    hub.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(body ? { payload: body } : {}) });
  const get = async (query: string) => {
    const res = await call('GET', `/v1/audit${query}`, hub.tokens.viewer);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as {
      items: { id: number; actor: string; action: string; target: string; outcome: string }[];
      next_cursor: string | null;
    };
  };

  before(async () => {
    hub = await startTestHub();
    for (const id of ['a1', 'a2'])
      assert.equal((await call('POST', '/v1/sites', hub.tokens.admin, { id, name: id })).statusCode, 201);
    await new Promise((r) => setTimeout(r, 20));
    between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await call('POST', '/v1/sites', hub.tokens.operator, { id: 'a3', name: 'a3' })).statusCode, 403);
    assert.equal((await call('POST', '/v1/sites', hub.tokens.admin, { id: 'a4', name: 'a4' })).statusCode, 201);
  });
  after(() => hub.close());

  it('lists every mutating request newest first, accepted and refused', async () => {
    const { items } = await get('');
    assert.deepEqual(
      items.map((i) => [i.actor, i.action, i.target, i.outcome]),
      [
        ['t-admin', 'site.create', 'site/a4', 'accepted'],
        ['t-operator', 'POST /v1/sites', '/v1/sites', 'rejected'],
        ['t-admin', 'site.create', 'site/a2', 'accepted'],
        ['t-admin', 'site.create', 'site/a1', 'accepted'],
      ],
    );
  });

  it('filters by actor, action, target and time; pages with a cursor', async () => {
    assert.deepEqual(
      (await get('?actor=t-operator')).items.map((i) => i.outcome),
      ['rejected'],
    );
    assert.equal((await get('?action=site.create')).items.length, 3);
    assert.deepEqual(
      (await get('?target=site/a1&target=site/a4')).items.map((i) => i.target),
      ['site/a4', 'site/a1'],
    );
    assert.deepEqual(
      (await get(`?until=${encodeURIComponent(between)}`)).items.map((i) => i.target),
      ['site/a2', 'site/a1'],
    );
    // An offset is RFC 3339 too.
    const since = new Date(between).toISOString().replace('Z', '+00:00');
    assert.equal((await get(`?since=${encodeURIComponent(since)}`)).items.length, 2);

    const first = await get('?limit=3');
    assert.equal(first.items.length, 3);
    assert.ok(first.next_cursor);
    const second = await get(`?limit=3&cursor=${first.next_cursor}`);
    assert.deepEqual(
      second.items.map((i) => i.target),
      ['site/a1'],
    );
    assert.equal(second.next_cursor, null);
  });

  it('400s name the parameter', async () => {
    for (const [query, field] of [
      ['?since=yesterday', 'query.since'],
      ['?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'query.until'],
      ['?cursor=nope', 'query.cursor'],
      ['?who=me', 'query'],
    ] as const) {
      const res = await call('GET', `/v1/audit${query}`, hub.tokens.viewer);
      assert.equal(res.statusCode, 400, query);
      assert.ok(
        res.json().error.details.some((d: { field: string }) => d.field.startsWith(field)),
        `${query}: ${res.body}`,
      );
    }
    assert.equal((await hub.app.inject({ method: 'GET', url: '/v1/audit' })).statusCode, 401);
  });
});

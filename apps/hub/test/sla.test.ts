import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { insertDevice, insertSite, setLifecycle, watchSlas } from '@fleet/db';
import { slaPolicyWith, type FleetLifecycleState } from '@fleet/domain';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

interface BreachBody {
  id: string;
  object_id: string;
  object_name: string;
  sla_key: string;
  watch: string;
  state: string;
  limit_s: number;
  overdue_s: number;
  resolved_at: string | null;
  resolution: string | null;
  deliveries: { webhook: string; event: string; status: string; attempts: number }[];
}

// GET /v1/sla-breaches over breaches the agent's watch pass leaves in Postgres.
describe('GET /v1/sla-breaches', () => {
  let hub: TestHub;
  const ids: Record<string, string> = {};

  const get = async (query: string, token = hub.tokens.viewer) => {
    const res = await hub.app.inject({
      method: 'GET',
      url: `/v1/sla-breaches${query}`,
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: res.statusCode, body: res.json() as { items: BreachBody[]; next_cursor: string | null } };
  };
  const move = async (deviceId: string, to: FleetLifecycleState, ago: string) => {
    const change = await setLifecycle(hub.handle.db, {
      deviceId,
      to,
      writer: 'lifecycle-workflow',
      jobId: randomUUID(),
      reason: 'Test',
    });
    await hub.handle.pool.query(`update device_transitions set at = now() - $2::interval where id = $1`, [
      change!.transition!.id,
      ago,
    ]);
  };

  before(async () => {
    hub = await startTestHub();
    await insertSite(hub.handle.db, { id: 'sb-01', name: 'one' });
    await insertSite(hub.handle.db, { id: 'sb-02', name: 'two' });
    for (const [name, site] of [
      ['a', 'sb-01'],
      ['b', 'sb-01'],
      ['c', 'sb-02'],
    ] as const) {
      ids[name] = (await insertDevice(hub.handle.db, { name, siteId: site })).id;
      await move(ids[name]!, 'enrolling', '3 hours');
    }
    const webhooks = [{ name: 'ops', events: ['sla.breached', 'sla.resolved'] as const }];
    await watchSlas(hub.handle.db, slaPolicyWith({}), webhooks);
    await move(ids['a']!, 'failed', '1 second');
    await watchSlas(hub.handle.db, slaPolicyWith({}), webhooks);
  });
  after(() => hub?.close());

  it('lists breaches newest first with their deliveries, filtered by status, site and object', async () => {
    const all = await get('');
    assert.equal(all.status, 200);
    assert.equal(all.body.items.length, 3);
    const a = all.body.items.find((b) => b.object_id === ids['a'])!;
    assert.deepEqual(
      [a.sla_key, a.watch, a.state, a.limit_s, a.resolution, a.object_name],
      ['lifecycle:enrolling', 'lifecycle', 'enrolling', 7200, 'cleared', 'a'],
    );
    assert.ok(a.overdue_s >= 3599 && a.overdue_s < 3700, String(a.overdue_s));
    assert.deepEqual(a.deliveries.map((d) => `${d.webhook}/${d.event}/${d.status}`).sort(), [
      'ops/sla.breached/pending',
      'ops/sla.resolved/pending',
    ]);

    const open = await get('?status=open');
    assert.deepEqual(open.body.items.map((b) => b.object_id).sort(), [ids['b'], ids['c']].sort());
    assert.ok(open.body.items.every((b) => b.resolved_at === null));
    const site = await get('?status=open&site_id=sb-02');
    assert.deepEqual(
      site.body.items.map((b) => b.object_id),
      [ids['c']],
    );
    const device = await get(`?object_id=${ids['a']}&object_type=device`);
    assert.deepEqual(
      device.body.items.map((b) => b.object_id),
      [ids['a']],
    );
  });

  it('pages with a cursor and answers one breach by id; refuses bad filters', async () => {
    const first = await get('?limit=2');
    assert.equal(first.body.items.length, 2);
    assert.ok(first.body.next_cursor);
    const second = await get(`?limit=2&cursor=${first.body.next_cursor}`);
    assert.equal(second.body.items.length, 1);
    assert.equal(second.body.next_cursor, null);
    const seen = [...first.body.items, ...second.body.items].map((b) => b.id);
    assert.equal(new Set(seen).size, 3);

    const one = await hub.app.inject({
      method: 'GET',
      url: `/v1/sla-breaches/${seen[0]}`,
      headers: { authorization: `Bearer ${hub.tokens.viewer}` },
    });
    assert.equal(one.statusCode, 200);
    assert.equal((one.json() as BreachBody).id, seen[0]);
    const missing = await hub.app.inject({
      method: 'GET',
      url: `/v1/sla-breaches/${randomUUID()}`,
      headers: { authorization: `Bearer ${hub.tokens.viewer}` },
    });
    assert.equal(missing.statusCode, 404);

    assert.equal((await get('?status=stuck')).status, 400);
    assert.equal((await get('?object_type=rack')).status, 400);
    assert.equal((await get('?cursor=nonsense')).status, 400);
  });
});

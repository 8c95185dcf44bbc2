import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { insertDevice, insertSite, racks, type DbHandle } from '@fleet/db';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// Writes Postgres refuses by a unique index (typed UniqueViolations from @fleet/db) answer 409 naming the field.

describe('hub conflicts from unique indexes', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let tokens: TestHub['tokens'];
  let rackId = '';

  before(async () => {
    hub = await startTestHub();
    ({ handle, app, tokens } = hub);
    await insertSite(handle.db, { id: 'lab', name: 'Lab' });
    const [rack] = await handle.db.insert(racks).values({ siteId: 'lab', name: 'rack-1' }).returning();
    rackId = rack!.id;
    await insertDevice(handle.db, {
      name: 'tray-0',
      siteId: 'lab',
      rackId,
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: 'http://127.0.0.1:9000',
      credentialRef: 'bmc/default',
    });
  });
  after(() => hub.close());

  const post = (url: string, body: object, token = tokens.admin) =>
    app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: body });
  const count = async (sql: string) => (await handle.pool.query(`select count(*)::int as n from ${sql}`)).rows[0].n;

  it('a device registered under a name its site already has is a 409 naming body.name', async () => {
    const device = {
      name: 'tray-9',
      site_id: 'lab',
      node_type: 'compute_gb200_nvidia',
      bmc_url: 'http://127.0.0.1:9009',
      credential_ref: 'bmc/default',
    };
    assert.equal((await post('/v1/devices', device)).statusCode, 201);
    const again = await post('/v1/devices', device);
    assert.equal(again.statusCode, 409, again.body);
    assert.equal(again.json().error.code, 'ALREADY_EXISTS');
    assert.deepEqual(again.json().error.details, [{ field: 'body.name', issue: 'taken' }]);
    assert.equal(await count(`devices where name = 'tray-9'`), 1);
  });

  it('a second power sequence on a rack is refused by the rack guard while the first is active', async () => {
    const first = await post(`/v1/racks/${rackId}/power`, { op: 'on' }, tokens.operator);
    assert.equal(first.statusCode, 202, first.body);
    const second = await post(`/v1/racks/${rackId}/power`, { op: 'off' }, tokens.operator);
    assert.equal(second.statusCode, 409, second.body);
    assert.match(second.json().error.message, /already has a power sequence running/);
    assert.equal(await count(`jobs where kind = 'rack.power'`), 1);
  });
});

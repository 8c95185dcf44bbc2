import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { connectDb, createApiToken, hashToken, revokeApiToken, type DbHandle } from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { registerAuth } from '../src/plugins/auth.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';
const ttlMs = 300;

describe('bearer token cache', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let app: FastifyInstance;
  let lookups = 0;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 2);
    // Counts the token lookups the hub makes, to tell a cache hit from a query.
    handle.pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
        if (text?.includes('"api_tokens"')) lookups++;
        return query(...args);
      }) as typeof client.query;
    });
    app = Fastify();
    registerAuth(app, handle.db, ttlMs);
    app.get('/whoami', { config: { role: 'viewer' } }, async (req) => ({ name: req.actor!.name }));
    await app.ready();
  });
  after(async () => {
    await app.close();
    await handle.close();
    await database.drop();
  });

  const call = async (token: string) =>
    (await app.inject({ url: '/whoami', headers: { authorization: `Bearer ${token}` } })).statusCode;

  it('asks Postgres once per token within the TTL, and refuses a revoked token once the TTL has passed', async () => {
    const { token } = await createApiToken(handle.db, 'cached-viewer', 'viewer');
    lookups = 0;
    for (let i = 0; i < 5; i++) assert.equal(await call(token), 200);
    assert.equal(lookups, 1);

    await handle.pool.query(`update api_tokens set revoked_at = now() where token_hash = $1`, [hashToken(token)]);
    await sleep(ttlMs + 50);
    assert.equal(await call(token), 401);
  });

  it('never caches an unknown token: it works as soon as it is created', async () => {
    const secret = 'fleet_not-yet-issued-token';
    assert.equal(await call(secret), 401);
    await handle.pool.query(`insert into api_tokens (name, role, token_hash) values ('late', 'viewer', $1)`, [
      hashToken(secret),
    ]);
    assert.equal(await call(secret), 200);
  });

  it('a revocation committed anywhere is refused at once by every hub process, long before the TTL', async () => {
    // A second hub process on the same database, trusting its cache for a minute.
    const replica = Fastify();
    registerAuth(replica, handle.db, 60_000);
    replica.get('/whoami', { config: { role: 'viewer' } }, async (req) => ({ name: req.actor!.name }));
    await replica.ready();
    try {
      const { token, row } = await createApiToken(handle.db, 'replicated-viewer', 'viewer');
      const onReplica = async () =>
        (await replica.inject({ url: '/whoami', headers: { authorization: `Bearer ${token}` } })).statusCode;
      assert.equal(await onReplica(), 200);
      lookups = 0;
      assert.equal(await onReplica(), 200);
      assert.equal(lookups, 0, 'the replica answers from its cache');

      await handle.db.transaction((tx) => revokeApiToken(tx, row.id, 'another-hub', 'left the team'));
      const revokedAt = Date.now();
      while ((await onReplica()) === 200) {
        assert.ok(Date.now() - revokedAt < 1_000, 'the replica still accepts the revoked token after 1 s');
        await sleep(20);
      }
    } finally {
      await replica.close();
    }
  });

  it('keeps no cache while its revocation listener is down, and listens again', async () => {
    const { token } = await createApiToken(handle.db, 'unlistened-viewer', 'viewer');
    await handle.pool.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where query = 'listen fleet_token_revoked'
       and datname = current_database()`,
    );
    await sleep(100);
    lookups = 0;
    for (let i = 0; i < 3; i++) assert.equal(await call(token), 200);
    assert.equal(lookups, 3, 'every request asks Postgres while revocations could be missed');
    // A revocation no one hears of (written straight to the table) is refused on the next request.
    await handle.pool.query(`update api_tokens set revoked_at = now() where token_hash = $1`, [hashToken(token)]);
    assert.equal(await call(token), 401);

    // Back within the retry interval: answers are cached again.
    const { token: fresh } = await createApiToken(handle.db, 'relistened-viewer', 'viewer');
    const deadline = Date.now() + 5_000;
    for (;;) {
      lookups = 0;
      await call(fresh);
      await call(fresh);
      if (lookups === 1) break;
      assert.ok(Date.now() < deadline, 'the revocation listener did not come back');
      await sleep(200);
    }
  });
});

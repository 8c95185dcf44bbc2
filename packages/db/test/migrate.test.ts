import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { migrateDatabase } from '../src/migrate.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(query: string): Promise<void> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(query);
  } finally {
    await client.end();
  }
}

// Several processes may migrate at once (each hub pod's init container in deploy/k8s): all must succeed.
describe('migrateDatabase (Postgres)', () => {
  const name = `t_migrate_${randomBytes(6).toString('hex')}`;
  const url = Object.assign(new URL(baseUrl), { pathname: `/${name}` }).toString();
  before(() => admin(`create database "${name}"`));
  after(() => admin(`drop database if exists "${name}" with (force)`));

  it('applies the migrations once when three processes start on an empty database together', async () => {
    const results = await Promise.allSettled([migrateDatabase(url), migrateDatabase(url), migrateDatabase(url)]);
    assert.deepEqual(
      results.map((r) => (r.status === 'rejected' ? String((r.reason as Error).message) : 'ok')),
      ['ok', 'ok', 'ok'],
    );
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const applied = await client.query<{ n: string }>('select count(*) as n from drizzle.__drizzle_migrations');
      const hashes = await client.query<{ n: string }>(
        'select count(distinct hash) as n from drizzle.__drizzle_migrations',
      );
      assert.ok(Number(applied.rows[0]?.n) > 0);
      assert.equal(applied.rows[0]?.n, hashes.rows[0]?.n, 'a migration was recorded twice');
    } finally {
      await client.end();
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import {
  AUDIT_GENESIS_HASH,
  auditChainHead,
  auditChainPage,
  auditLog,
  connectDb,
  insertAudit,
  verifyAuditChain,
  type DbHandle,
} from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

// The audit log's hash chain (migration 0021_audit_chain, docs/security.md "Audit log"): append-only, one line under
// concurrent writers, and tampering (as a superuser with the triggers off) found by the verifier.
describe('audit log hash chain (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let n = 0;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 8);
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const row = (
    actor = 'alice',
    details: Record<string, unknown> | null = { n: ++n, nested: { b: [1, 2.5], a: 'x' } },
  ) => ({
    actor,
    role: 'operator',
    action: 'device.power',
    target: `device/${n}`,
    requestId: `req-${n}`,
    outcome: 'accepted',
    statusCode: 202,
    details,
  });

  /** Runs `sql` as a superuser with every trigger off (session_replication_role = replica), in one transaction. */
  const tamper = async (...statements: string[]) => {
    const client: pg.PoolClient = await handle.pool.connect();
    try {
      await client.query('begin');
      await client.query('set local session_replication_role = replica');
      for (const s of statements) await client.query(s);
      await client.query('commit');
    } finally {
      client.release();
    }
  };

  it('chains each insert to the row before, whatever the insert sends as id or hashes', async () => {
    await insertAudit(handle.db, row());
    await handle.db.insert(auditLog).values({
      ...row('bob', null),
      id: 999_999,
      prevHash: 'forged',
      hash: 'forged',
    });
    const rows = await auditChainPage(handle.db, { afterId: 0, limit: 10 });
    assert.deepEqual(
      rows.map((r) => r.id),
      [1, 2],
    );
    assert.equal(rows[0]!.prev_hash, AUDIT_GENESIS_HASH);
    assert.equal(rows[1]!.prev_hash, rows[0]!.hash);
    assert.match(rows[1]!.hash, /^[0-9a-f]{64}$/);
    assert.deepEqual(await auditChainHead(handle.db), { lastId: 2, lastHash: rows[1]!.hash });
    assert.deepEqual(JSON.parse(rows[0]!.canonical).slice(2, 4), ['alice', 'operator']);
    assert.equal((await verifyAuditChain(handle.db)).ok, true);
  });

  it('refuses UPDATE, DELETE and TRUNCATE on audit_log, and any write of the chain head', async () => {
    for (const statement of [
      "update audit_log set actor = 'mallory'",
      'delete from audit_log where id = 1',
      'truncate audit_log',
      'update audit_chain_head set last_id = 0',
      'delete from audit_chain_head',
      'truncate audit_chain_head',
    ])
      await assert.rejects(handle.pool.query(statement), /the audit log is append-only/, statement);
    assert.equal((await auditChainPage(handle.db, { afterId: 0, limit: 10 })).length, 2);
  });

  it('keeps one chain, gapless in id, under many concurrent transactions', async () => {
    const before = (await auditChainHead(handle.db)).lastId;
    // 40 transactions over 8 connections, each writing two rows with a pause between: they interleave.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        handle.db.transaction(async (tx) => {
          await insertAudit(tx, row(`writer-${i}`));
          await tx.execute(sql`select pg_sleep(0.005)`);
          await insertAudit(tx, row(`writer-${i}`));
        }),
      ),
    );
    const rows = await auditChainPage(handle.db, { afterId: before, limit: 1000 });
    assert.equal(rows.length, 80);
    assert.deepEqual(
      rows.map((r) => r.id),
      Array.from({ length: 80 }, (_, i) => before + 1 + i),
    );
    // A transaction's two rows are next to each other: the second writer waited for the first to commit.
    for (let i = 0; i < 80; i += 2) assert.equal(rows[i]!.actor, rows[i + 1]!.actor);
    const v = await verifyAuditChain(handle.db, 7);
    assert.equal(v.ok, true, v.problem);
    assert.equal(v.rows, before + 80);
  });

  it('finds a changed field, a deleted row, a reordering and deleted last rows', async () => {
    const [third] = await auditChainPage(handle.db, { afterId: 2, limit: 1 });
    assert.ok(third);

    await tamper("update audit_log set actor = 'mallory' where id = 3");
    let v = await verifyAuditChain(handle.db, 5);
    assert.deepEqual([v.ok, v.brokenAt, v.rows], [false, 3, 2]);
    assert.match(v.problem!, /row 3: its hash does not match its content/);
    await tamper(`update audit_log set actor = '${third.actor}' where id = 3`);
    assert.equal((await verifyAuditChain(handle.db)).ok, true);

    // Rewriting the row's hash too does not help: the next row chains to the old one.
    await tamper(
      'update audit_log set details = \'{"n": 0}\' where id = 3',
      'update audit_log set hash = fleet_audit_hash(audit_log) where id = 3',
    );
    v = await verifyAuditChain(handle.db, 5);
    assert.deepEqual([v.ok, v.brokenAt], [false, 4]);
    assert.match(v.problem!, /row 4: its prev_hash is not the hash of row 3/);
    await tamper(
      `update audit_log set details = '${JSON.stringify(third.details)}', hash = '${third.hash}' where id = 3`,
    );
    assert.equal((await verifyAuditChain(handle.db)).ok, true);

    await tamper('delete from audit_log where id = 3');
    v = await verifyAuditChain(handle.db, 5);
    assert.deepEqual([v.ok, v.brokenAt], [false, 4]);
    assert.match(v.problem!, /rows deleted, inserted or reordered/);
    await tamper(
      `insert into audit_log select * from json_populate_record(null::audit_log, '${JSON.stringify({
        ...third,
        canonical: undefined,
        at: third.at,
      }).replaceAll("'", "''")}')`,
    );
    assert.equal((await verifyAuditChain(handle.db)).ok, true);

    await tamper(
      'update audit_log set id = -5 where id = 5',
      'update audit_log set id = 5 where id = 6',
      'update audit_log set id = 6 where id = -5',
    );
    v = await verifyAuditChain(handle.db, 5);
    assert.equal(v.ok, false);
    assert.equal(v.brokenAt, 5);
    await tamper(
      'update audit_log set id = -5 where id = 5',
      'update audit_log set id = 5 where id = 6',
      'update audit_log set id = 6 where id = -5',
    );
    assert.equal((await verifyAuditChain(handle.db)).ok, true);

    const head = await auditChainHead(handle.db);
    await tamper(`delete from audit_log where id > ${head.lastId - 2}`);
    v = await verifyAuditChain(handle.db, 5);
    assert.deepEqual([v.ok, v.brokenAt], [false, head.lastId]);
    assert.match(v.problem!, /rows deleted/);
  });
});

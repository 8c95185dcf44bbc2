import { createHash } from 'node:crypto';
import { and, desc, gte, inArray, lt, lte, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { auditLog, type AuditEntry, type AuditRow } from '../schema/index.js';

export async function insertAudit(db: DbOrTx, entry: AuditEntry): Promise<void> {
  await db.insert(auditLog).values(entry);
}

export interface AuditPageQuery {
  limit: number;
  /** The id of the last row of the previous page. */
  afterId?: number | undefined;
  actor?: string[] | undefined;
  action?: string[] | undefined;
  target?: string[] | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

/**
 * Newest first by id, the order rows were written (`at` is the writing transaction's start, which a long one can
 * leave behind later rows). since/until bound `at`, inclusively.
 */
export async function listAudit(db: DbOrTx, q: AuditPageQuery): Promise<AuditRow[]> {
  const c = [];
  if (q.actor?.length) c.push(inArray(auditLog.actor, q.actor));
  if (q.action?.length) c.push(inArray(auditLog.action, q.action));
  if (q.target?.length) c.push(inArray(auditLog.target, q.target));
  if (q.since) c.push(gte(auditLog.at, q.since));
  if (q.until) c.push(lte(auditLog.at, q.until));
  if (q.afterId !== undefined) c.push(lt(auditLog.id, q.afterId));
  return db
    .select()
    .from(auditLog)
    .where(c.length ? and(...c) : undefined)
    .orderBy(desc(auditLog.id))
    .limit(q.limit);
}

/**
 * One audit row as the chain holds it (docs/security.md, "Audit log"): its fields, `canonical` (the text its hash is
 * over: a JSON array of the fields in this order, then prev_hash) and the hashes. GET /v1/audit/export streams these.
 */
// A type, not an interface: drizzle's execute<T> wants an indexable row type.
export type AuditChainRecord = {
  id: number;
  /** UTC, milliseconds: 2026-01-02T03:04:05.678Z, as in `canonical`. */
  at: string;
  actor: string;
  role: string | null;
  action: string;
  target: string | null;
  request_id: string;
  outcome: string;
  status_code: number;
  job_id: string | null;
  details: unknown;
  prev_hash: string;
  hash: string;
  canonical: string;
};

/** The hash before the first row. */
export const AUDIT_GENESIS_HASH = '0'.repeat(64);

/** Chain records in id order (the chain's order), after `afterId`, up to `toId`; the canonical text from Postgres. */
export async function auditChainPage(
  db: DbOrTx,
  q: { afterId: number; toId?: number | undefined; limit: number },
): Promise<AuditChainRecord[]> {
  const res = await db.execute<AuditChainRecord>(sql`
    select a.id::float8 as id, to_char(a.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, a.actor,
      a.role, a.action, a.target, a.request_id, a.outcome, a.status_code, a.job_id, a.details, a.prev_hash, a.hash,
      fleet_audit_canonical(a) as canonical
    from audit_log a
    where a.id > ${q.afterId} ${q.toId === undefined ? sql`` : sql`and a.id <= ${q.toId}`}
    order by a.id limit ${q.limit}`);
  return res.rows;
}

/** The chain's head as the insert trigger left it: the last row's id and hash. */
export async function auditChainHead(db: DbOrTx): Promise<{ lastId: number; lastHash: string }> {
  const res = await db.execute<{ last_id: number; last_hash: string }>(
    sql`select last_id::float8 as last_id, last_hash from audit_chain_head`,
  );
  const row = res.rows[0];
  if (!row) throw new Error('audit_chain_head has no row: the chain was tampered with or never migrated');
  return { lastId: row.last_id, lastHash: row.last_hash };
}

/** A JSON value with object keys sorted, so two parses of the same data compare equal as text. */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/**
 * Checks chain records one at a time, in id order (the same for rows read from Postgres and for lines of an export):
 * each record's canonical text must name its fields, hash to its hash, and chain to the record before (its
 * prev_hash that record's hash). The first record chains to `anchor` when given (the genesis hash for a chain read
 * from its start; for an export from a later id, the hash the verifier trusts for the row before), else is taken as
 * the anchor. `check` answers the problem, or undefined when the record is sound.
 */
export class AuditChainVerifier {
  last: { id: number; hash: string } | undefined;
  count = 0;

  constructor(private anchor?: string) {}

  check(r: AuditChainRecord): string | undefined {
    let fields: unknown;
    try {
      fields = JSON.parse(r.canonical);
    } catch {
      return `row ${r.id}: its canonical text is not JSON`;
    }
    const own = [r.id, r.at, r.actor, r.role, r.action, r.target, r.request_id, r.outcome, r.status_code, r.job_id];
    const expected = [...own, r.details ?? null, r.prev_hash];
    if (JSON.stringify(sorted(fields)) !== JSON.stringify(sorted(expected)))
      return `row ${r.id}: its fields differ from the text its hash covers`;
    if (createHash('sha256').update(r.canonical, 'utf8').digest('hex') !== r.hash)
      return `row ${r.id}: its hash does not match its content (a field was changed)`;
    if (this.last && r.id <= this.last.id) return `row ${r.id}: comes after row ${this.last.id} (rows reordered)`;
    const before = this.last?.hash ?? this.anchor;
    if (before !== undefined && r.prev_hash !== before)
      return this.last
        ? `row ${r.id}: its prev_hash is not the hash of row ${this.last.id} (rows deleted, inserted or reordered)`
        : `row ${r.id}: its prev_hash is not the anchor ${before}`;
    this.last = { id: r.id, hash: r.hash };
    this.count++;
    return undefined;
  }
}

export interface AuditVerification {
  ok: boolean;
  rows: number;
  lastId: number | null;
  lastHash: string;
  /** The first row found broken (or the head's id, when rows after the last one were deleted). */
  brokenAt?: number;
  problem?: string;
}

/** Walks the whole chain in pages of `pageSize` and checks it against the head; stops at the first broken row. */
export async function verifyAuditChain(db: DbOrTx, pageSize = 1000): Promise<AuditVerification> {
  const v = new AuditChainVerifier(AUDIT_GENESIS_HASH);
  const result = (extra: Partial<AuditVerification> = {}): AuditVerification => ({
    ok: true,
    rows: v.count,
    lastId: v.last?.id ?? null,
    lastHash: v.last?.hash ?? AUDIT_GENESIS_HASH,
    ...extra,
  });
  let afterId = 0;
  for (;;) {
    const page = await auditChainPage(db, { afterId, limit: pageSize });
    for (const r of page) {
      const problem = v.check(r);
      if (problem) return result({ ok: false, brokenAt: r.id, problem });
    }
    if (page.length < pageSize) break;
    afterId = page.at(-1)!.id;
  }
  // The head is read after the walk: rows written meanwhile only move it further than the walk went.
  const head = await auditChainHead(db);
  const last = v.last ?? { id: 0, hash: AUDIT_GENESIS_HASH };
  if (head.lastId === last.id && head.lastHash !== last.hash)
    return result({ ok: false, brokenAt: last.id, problem: `the chain's head holds another hash for row ${last.id}` });
  if (head.lastId < last.id)
    return result({ ok: false, brokenAt: last.id, problem: `row ${last.id} is past the chain's head ${head.lastId}` });
  if (head.lastId > last.id) {
    const later = await auditChainPage(db, { afterId: last.id, limit: 1 });
    if (later.length === 0)
      return result({
        ok: false,
        brokenAt: head.lastId,
        problem: `the chain's head names row ${head.lastId} but the last row is ${last.id} (rows deleted)`,
      });
  }
  return result();
}

import { and, desc, gte, inArray, lt, lte } from 'drizzle-orm';
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

import { and, asc, eq, gt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { approvals, type Approval, type NewApproval } from '../schema/index.js';

export async function insertApproval(db: DbOrTx, row: NewApproval): Promise<Approval> {
  const [inserted] = await db.insert(approvals).values(row).returning();
  return inserted!;
}

export async function getApproval(db: DbOrTx, id: string): Promise<Approval | undefined> {
  const [row] = await db.select().from(approvals).where(eq(approvals.id, id));
  return row;
}

/** Pending approvals not yet expired, oldest first, after the cursor's (created_at, id). */
export async function listPendingApprovals(
  db: DbOrTx,
  q: { limit: number; after?: [Date, string] | undefined },
): Promise<Approval[]> {
  return db
    .select()
    .from(approvals)
    .where(
      and(
        eq(approvals.state, 'pending'),
        gt(approvals.expiresAt, sql`now()`),
        q.after ? sql`(${approvals.createdAt}, ${approvals.id}) > (${q.after[0]}, ${q.after[1]}::uuid)` : undefined,
      ),
    )
    .orderBy(asc(approvals.createdAt), asc(approvals.id))
    .limit(q.limit);
}

/**
 * Moves a pending, unexpired approval to its decision; undefined when it is no longer pending or has expired (another
 * decision won, or time ran out), so the caller's transaction can be rolled back.
 */
export async function decideApproval(
  db: DbOrTx,
  id: string,
  decision: { state: 'approved' | 'rejected'; decidedBy: string; reason: string; jobId?: string | undefined },
): Promise<Approval | undefined> {
  const [row] = await db
    .update(approvals)
    .set({
      state: decision.state,
      decidedBy: decision.decidedBy,
      decidedAt: sql`now()`,
      decisionReason: decision.reason,
      jobId: decision.jobId ?? null,
    })
    .where(and(eq(approvals.id, id), eq(approvals.state, 'pending'), gt(approvals.expiresAt, sql`now()`)))
    .returning();
  return row;
}

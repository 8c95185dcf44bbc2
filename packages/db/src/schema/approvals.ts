import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, sqlList, tsz } from './_columns.js';
import { jobs } from './jobs.js';

export const approvalStates = ['pending', 'approved', 'rejected'] as const;
export type ApprovalState = (typeof approvalStates)[number];

/**
 * A request a two-person rule holds (docs/security.md, "Two-person rules"): what was asked (the rule, the target and
 * the request's input, from which the job is made again at approval time) and by whom, until a second person
 * approves it (the job is written in that transaction), rejects it, or it expires (a pending row past `expires_at`).
 */
export const approvals = pgTable(
  'approvals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The two-person rule, e.g. switch.factory_reset. */
    rule: text('rule').notNull(),
    /** The job kind the approval would start. */
    jobKind: text('job_kind').notNull(),
    /** What the job acts on, as audit rows name it: device/<id>, rack/<id>. */
    target: text('target').notNull(),
    /** The request's input, as the rule's action takes it again at approval time. */
    input: jsonb('input').notNull().$type<Record<string, unknown>>(),
    requestedBy: text('requested_by').notNull(),
    requestedRole: text('requested_role'),
    requestId: text('request_id').notNull(),
    state: text('state').$type<ApprovalState>().notNull().default('pending'),
    expiresAt: tsz('expires_at').notNull(),
    decidedBy: text('decided_by'),
    decidedAt: tsz('decided_at'),
    decisionReason: text('decision_reason'),
    // The retention reaper deletes old jobs; the approval stays, and the audit log names its job.
    jobId: uuid('job_id').references(() => jobs.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  },
  (t) => [
    index('approvals_pending_idx')
      .on(t.createdAt, t.id)
      .where(sql`${t.state} = 'pending'`),
    index('approvals_job_id_idx').on(t.jobId),
    check('approvals_state_check', sql`${t.state} in ${sqlList(approvalStates)}`),
  ],
);

export type Approval = typeof approvals.$inferSelect;
export type NewApproval = typeof approvals.$inferInsert;

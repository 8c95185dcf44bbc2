import { bigserial, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tsz } from './_columns.js';

export const apiTokens = pgTable('api_tokens', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  role: text('role').notNull(),
  /** sha256 of the token; the token itself is shown once and never stored. */
  tokenHash: text('token_hash').notNull().unique(),
  createdAt: createdAt(),
  revokedAt: tsz('revoked_at'),
});

export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    actor: text('actor').notNull(),
    role: text('role'),
    action: text('action').notNull(),
    target: text('target'),
    requestId: text('request_id').notNull(),
    /** accepted | rejected */
    outcome: text('outcome').notNull(),
    statusCode: integer('status_code').notNull(),
    jobId: uuid('job_id'),
    details: jsonb('details').$type<Record<string, unknown>>(),
  },
  (t) => [index('audit_log_at_idx').on(t.at), index('audit_log_job_id_idx').on(t.jobId)],
);

export type ApiToken = typeof apiTokens.$inferSelect;
export type AuditEntry = typeof auditLog.$inferInsert;

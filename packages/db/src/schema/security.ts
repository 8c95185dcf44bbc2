import { bigserial, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tsz } from './_columns.js';

export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull().unique(),
    role: text('role').notNull(),
    /** sha256 of the token; the token itself is shown once and never stored. */
    tokenHash: text('token_hash').notNull().unique(),
    /** The site ids the token may act on and read; null: every site (docs/security.md "Per-site roles"). */
    sites: text('sites').array(),
    createdAt: createdAt(),
    /** Who made it: a token's name, or `admin-cli`; null for tokens older than the column. */
    createdBy: text('created_by'),
    /** Refused from this moment on; null: never expires. */
    expiresAt: tsz('expires_at'),
    /** When the token was last used, to within a minute (each hub process writes it at most once a minute). */
    lastUsedAt: tsz('last_used_at'),
    revokedAt: tsz('revoked_at'),
    revokedBy: text('revoked_by'),
    revokeReason: text('revoke_reason'),
  },
  // GET /v1/tokens pages newest first.
  (t) => [index('api_tokens_created_at_id_idx').on(t.createdAt, t.id)],
);

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
    /**
     * The hash chain (docs/security.md, "Audit log"): set by the insert trigger of migration 0021_audit_chain, which
     * also gives the row its id (its place in the chain); whatever an insert sends here is replaced.
     */
    prevHash: text('prev_hash').notNull().default(''),
    hash: text('hash').notNull().default(''),
  },
  // GET /v1/audit pages newest first by id under an actor or target filter.
  (t) => [
    index('audit_log_at_idx').on(t.at),
    index('audit_log_job_id_idx').on(t.jobId),
    index('audit_log_actor_id_idx').on(t.actor, t.id),
    index('audit_log_target_id_idx').on(t.target, t.id),
  ],
);

export type ApiToken = typeof apiTokens.$inferSelect;
export type AuditEntry = typeof auditLog.$inferInsert;
export type AuditRow = typeof auditLog.$inferSelect;

/**
 * Answers of creates made with an Idempotency-Key (those that make no job; jobs keep their key
 * themselves): the same actor, key and request replay the stored answer. A key is reusable once
 * it is a day old.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    actor: text('actor').notNull(),
    key: text('key').notNull(),
    /** The route the key was used on, e.g. `POST /v1/firmware/manifests`. */
    action: text('action').notNull(),
    requestFingerprint: text('request_fingerprint').notNull(),
    statusCode: integer('status_code').notNull(),
    headers: jsonb('headers').$type<Record<string, string>>().notNull(),
    response: jsonb('response').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.actor, t.key] }), index('idempotency_keys_created_at_idx').on(t.createdAt)],
);

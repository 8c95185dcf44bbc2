import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { JobError, JobProgress, StageTimeline } from '@fleet/domain';
import { createdAt, tsz, updatedAt } from './_columns.js';
import { devices, racks, sites } from './inventory.js';

/** The states of a job that still runs or waits to, as an SQL list for index predicates. */
const activeStates = sql.raw(`('queued', 'running', 'cancelling')`);
/** The job kinds the rack guard covers. */
const rackSequenceKinds = sql.raw(`('rack.power', 'rack.cold_reboot', 'rack.enrol')`);

export const jobs = pgTable(
  'jobs',
  {
    /** Also the Temporal workflow ID, so a retried start can never run twice. */
    id: uuid('id').primaryKey().defaultRandom(),
    kind: text('kind').notNull(),
    state: text('state').notNull().default('queued'),
    siteId: text('site_id').references(() => sites.id),
    deviceId: uuid('device_id').references(() => devices.id),
    rackId: uuid('rack_id').references(() => racks.id, { onDelete: 'set null' }),
    parentId: uuid('parent_id'),
    params: jsonb('params').notNull().$type<Record<string, unknown>>(),
    progress: jsonb('progress').$type<JobProgress>(),
    /** Stage timeline of staged jobs (rack power, cold reboot), updated while they run. */
    timeline: jsonb('timeline').$type<StageTimeline>(),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: jsonb('error').$type<JobError>(),
    createdBy: text('created_by').notNull(),
    idempotencyKey: text('idempotency_key'),
    /** sha256 of the request that created the job: same key + other body is a conflict. */
    requestFingerprint: text('request_fingerprint'),
    runId: text('run_id'),
    createdAt: createdAt(),
    startedAt: tsz('started_at'),
    finishedAt: tsz('finished_at'),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('jobs_created_by_idempotency_key_unique')
      .on(t.createdBy, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} is not null`),
    /** One active operation per device, whatever its kind. */
    uniqueIndex('jobs_one_active_per_device')
      .on(t.deviceId)
      .where(sql`${t.deviceId} is not null and ${t.state} in ('queued', 'running', 'cancelling')`),
    /** The rack guard: one rack power sequence at a time; a second is refused, not queued. */
    uniqueIndex('jobs_one_active_rack_sequence')
      .on(t.rackId)
      .where(sql`${t.rackId} is not null and ${t.kind} in ${rackSequenceKinds} and ${t.state} in ${activeStates}`),
    index('jobs_device_id_idx').on(t.deviceId),
    index('jobs_rack_id_idx').on(t.rackId),
    index('jobs_site_id_idx').on(t.siteId),
    index('jobs_parent_id_idx').on(t.parentId),
    index('jobs_created_at_id_idx').on(t.createdAt, t.id),
    index('jobs_open_idx')
      .on(t.id)
      .where(sql`${t.state} in ('queued', 'running', 'cancelling')`),
  ],
);

export const intents = pgTable(
  'intents',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    jobId: uuid('job_id')
      .notNull()
      .references(() => jobs.id),
    /** start | cancel | signal */
    kind: text('kind').notNull(),
    /** For signal intents: which signal (pause, resume, approve). */
    payload: jsonb('payload').$type<{ signal: string; args?: unknown[] }>(),
    /** pending → dispatched, or failed when Temporal refused it for good. */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    nextAttemptAt: tsz('next_attempt_at').notNull().defaultNow(),
    createdAt: createdAt(),
    dispatchedAt: tsz('dispatched_at'),
  },
  (t) => [
    index('intents_job_id_idx').on(t.jobId),
    index('intents_pending_idx')
      .on(t.nextAttemptAt, t.id)
      .where(sql`${t.status} = 'pending'`),
  ],
);

export type Job = typeof jobs.$inferSelect;
export type NewJob = typeof jobs.$inferInsert;
export type Intent = typeof intents.$inferSelect;

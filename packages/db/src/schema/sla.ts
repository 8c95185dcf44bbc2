import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import {
  slaEvents,
  slaObjectTypes,
  slaResolutions,
  type SlaEvent,
  type SlaObjectType,
  type SlaResolution,
} from '@fleet/domain';
import { createdAt, sqlList } from './_columns.js';
import { jobs } from './jobs.js';

const ms = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/**
 * Stuck-state SLA breaches (docs/sla.md): an object past its limit in one state, found by the workflow agent's watch,
 * open until the object is no longer past that limit since that time. Like the audit log, the object is no foreign
 * key: a deleted device or job keeps its breaches.
 */
export const slaBreaches = pgTable(
  'sla_breaches',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    objectType: text('object_type').$type<SlaObjectType>().notNull(),
    objectId: uuid('object_id').notNull(),
    /** For people: the device's name; a job's device, rack or campaign name. */
    objectName: text('object_name'),
    siteId: text('site_id'),
    /** `lifecycle:enrolling`, `job_running:device.enrol`, `job_queued`, `job_stage:firmware.campaign:wave`. */
    slaKey: text('sla_key').notNull(),
    /** The lifecycle state, the job's state, or the stage the job showed (`wave 2/5`). */
    state: text('state').notNull(),
    jobKind: text('job_kind'),
    limitS: integer('limit_s').notNull(),
    /** When the object entered the state: its limit ran from here. */
    since: ms('since').notNull(),
    breachedAt: ms('breached_at').notNull().defaultNow(),
    resolvedAt: ms('resolved_at'),
    resolution: text('resolution').$type<SlaResolution>(),
  },
  (t) => [
    // One open breach per object and key: the watch inserts what is past its limit and this drops the repeats.
    uniqueIndex('sla_breaches_open_unique')
      .on(t.objectType, t.objectId, t.slaKey)
      .where(sql`${t.resolvedAt} is null`),
    // GET /v1/sla-breaches pages newest first.
    index('sla_breaches_breached_at_id_idx').on(t.breachedAt, t.id),
    index('sla_breaches_object_id_idx').on(t.objectId),
    check('sla_breaches_object_type_check', sql`${t.objectType} in ${sqlList(slaObjectTypes)}`),
    check(
      'sla_breaches_resolution_check',
      sql`(${t.resolvedAt} is null and ${t.resolution} is null) or ${t.resolution} in ${sqlList(slaResolutions)}`,
    ),
  ],
);

/**
 * The stage each open top-level job shows, and since when, as the watch saw it: the jobs table keeps only the current
 * progress, so the watch remembers when a stage began (at most one watch interval late).
 */
export const slaJobStages = pgTable('sla_job_stages', {
  jobId: uuid('job_id')
    .primaryKey()
    .references(() => jobs.id, { onDelete: 'cascade' }),
  stage: text('stage').notNull(),
  since: ms('since').notNull(),
});

export const webhookDeliveryStatuses = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof webhookDeliveryStatuses)[number];

/**
 * The webhook outbox: one row per breach, webhook and event, written in the transaction that found or resolved the
 * breach, so an agent killed before sending sends after its restart. The webhook is the config's name, never its URL
 * (a URL can itself be a secret) nor its secret. The id is the receiver's idempotency key (X-Fleet-Delivery).
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    breachId: uuid('breach_id')
      .notNull()
      .references(() => slaBreaches.id, { onDelete: 'cascade' }),
    webhook: text('webhook').notNull(),
    event: text('event').$type<SlaEvent>().notNull(),
    /** The body sent, the same on every attempt. */
    payload: jsonb('payload').notNull().$type<Record<string, unknown>>(),
    status: text('status').$type<WebhookDeliveryStatus>().notNull().default('pending'),
    /** Attempts started (a lease counts one, so an attempt cut short by a crash counts too). */
    attempts: integer('attempts').notNull().default(0),
    /** When a pending delivery is due; while one is being sent, when its lease runs out. */
    nextAttemptAt: ms('next_attempt_at').notNull().defaultNow(),
    /** The HTTP status of the last answer, if one came. */
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    deliveredAt: ms('delivered_at'),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_breach_webhook_event_unique').on(t.breachId, t.webhook, t.event),
    index('webhook_deliveries_pending_idx')
      .on(t.nextAttemptAt, t.id)
      .where(sql`${t.status} = 'pending'`),
    check('webhook_deliveries_event_check', sql`${t.event} in ${sqlList(slaEvents)}`),
    check('webhook_deliveries_status_check', sql`${t.status} in ${sqlList(webhookDeliveryStatuses)}`),
  ],
);

export type SlaBreach = typeof slaBreaches.$inferSelect;
export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;

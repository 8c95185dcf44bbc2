import { sql } from 'drizzle-orm';
import { boolean, check, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import {
  facilityEventKinds,
  facilityEventStates,
  facilitySeverities,
  type FacilityEventKind,
  type FacilityEventState,
  type FacilityGrading,
  type FacilityRackActions,
  type FacilitySeverity,
} from '@fleet/domain';
import { sqlList } from './_columns.js';

const ms = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/**
 * Facility events (docs/day2.md, "Facility events"): what a building management system reported on racks, the
 * grading the hub made of it, the state of the response and the jobs it made. Racks and jobs are no foreign keys, like
 * the audit log's: an event outlives a rack removed from NetBox.
 */
export const facilityEvents = pgTable(
  'facility_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The token that posted it (the building management system's name). */
    source: text('source').notNull(),
    /** The system's own id of the event: a repeat with the same one is the same event. */
    externalId: text('external_id').notNull(),
    kind: text('kind').$type<FacilityEventKind>().notNull(),
    severity: text('severity').$type<FacilitySeverity>().notNull(),
    critical: boolean('critical').notNull().default(false),
    rackIds: uuid('rack_ids').array().notNull(),
    /** Where, as the system names it (a row, a room); for people. */
    location: text('location'),
    message: text('message').notNull(),
    /** When the system saw it; null when it did not say. */
    occurredAt: ms('occurred_at'),
    receivedAt: ms('received_at').notNull().defaultNow(),
    grading: jsonb('grading').$type<FacilityGrading>().notNull(),
    state: text('state').$type<FacilityEventState>().notNull(),
    /** Per rack: the quarantine jobs (or why a device was left out) and the power-off job with its outcome. */
    actions: jsonb('actions').$type<FacilityRackActions[]>().notNull().default([]),
    /** Every job the event made, for a job's way back to its event. */
    jobIds: uuid('job_ids')
      .array()
      .notNull()
      .default(sql`'{}'::uuid[]`),
    /** The operator's answer to the power-off: approve or reject, by whom, when and why. */
    decision: text('decision').$type<'approve' | 'reject'>(),
    decidedBy: text('decided_by'),
    decidedAt: ms('decided_at'),
    decisionReason: text('decision_reason'),
    updatedAt: ms('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('facility_events_source_external_id_unique').on(t.source, t.externalId),
    // GET /v1/facility-events pages newest first; the rack filter is an array overlap.
    index('facility_events_received_at_id_idx').on(t.receivedAt, t.id),
    index('facility_events_rack_ids_idx').using('gin', t.rackIds),
    // The follower's query: events whose power-off runs.
    index('facility_events_powering_off_idx')
      .on(t.id)
      .where(sql`${t.state} = 'powering_off'`),
    check('facility_events_kind_check', sql`${t.kind} in ${sqlList(facilityEventKinds)}`),
    check('facility_events_severity_check', sql`${t.severity} in ${sqlList(facilitySeverities)}`),
    check('facility_events_state_check', sql`${t.state} in ${sqlList(facilityEventStates)}`),
  ],
);

export type FacilityEvent = typeof facilityEvents.$inferSelect;
export type NewFacilityEvent = typeof facilityEvents.$inferInsert;

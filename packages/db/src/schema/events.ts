import { bigserial, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The live-update feed (GET /v1/events): one row per change of a job, campaign or device, written only by the
 * triggers of migration 0010_event_triggers (which also NOTIFY fleet_events with it). Ids follow commit order, so a
 * client that saw id N resumes with `id > N` and misses nothing; old rows are pruned (pruneEvents).
 */
export const events = pgTable(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow(),
    /** job | campaign | device */
    type: text('type').notNull(),
    objectId: text('object_id').notNull(),
    /** The object's ids and state after the change (no bodies: clients read those from the API). */
    data: jsonb('data').notNull().$type<Record<string, unknown>>(),
  },
  (t) => [index('events_at_idx').on(t.at)],
);

export type EventRow = typeof events.$inferSelect;

import { and, asc, gt, inArray, lt, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../client.js';
import { listenOn, type ChannelListener } from '../listener.js';
import { events, type EventRow } from '../schema/index.js';

/** The NOTIFY channel of the event triggers (migrations 0010_event_triggers, 0014 and 0024_day2_events). */
export const eventChannel = 'fleet_events';
/** What the triggers write: jobs, campaigns and devices, and the day-2 objects (docs/day2.md, "Events"). */
export const eventTypes = ['job', 'campaign', 'device', 'health', 'sla_breach', 'facility_event', 'rma'] as const;
export type EventType = (typeof eventTypes)[number];

/** A change as the feed carries it: its event id (commit order) and the object's id and state. */
export interface FleetEvent {
  eventId: number;
  type: EventType;
  id: string;
  data: Record<string, unknown>;
}

const fromRow = (r: EventRow): FleetEvent => ({
  eventId: r.id,
  type: r.type as EventType,
  id: r.objectId,
  data: r.data,
});

/** Events after `afterId`, oldest first, of the given types (all when none). */
export async function listEventsAfter(
  db: DbOrTx,
  afterId: number,
  limit: number,
  types?: readonly EventType[],
): Promise<FleetEvent[]> {
  const rows = await db
    .select()
    .from(events)
    .where(and(gt(events.id, afterId), types?.length ? inArray(events.type, [...types]) : undefined))
    .orderBy(asc(events.id))
    .limit(limit);
  return rows.map(fromRow);
}

/** The oldest kept event id and the newest one (0 and 0 when the table is empty). */
export async function eventBounds(db: DbOrTx): Promise<{ oldest: number; newest: number }> {
  const [row] = await db
    .select({ oldest: sql<string | null>`min(${events.id})`, newest: sql<string | null>`max(${events.id})` })
    .from(events);
  return { oldest: Number(row?.oldest ?? 0), newest: Number(row?.newest ?? 0) };
}

/** Drops events older than `maxAgeS` and all but the newest `keep`; a client further behind gets a reset. */
export async function pruneEvents(db: DbOrTx, maxAgeS: number, keep: number): Promise<number> {
  const res = await db
    .delete(events)
    .where(
      or(
        lt(events.at, sql`now() - make_interval(secs => ${maxAgeS})`),
        lt(events.id, sql`(select coalesce(max(id), 0) from events) - ${keep}`),
      ),
    );
  return res.rowCount ?? 0;
}

export type EventListener = ChannelListener;

/** LISTENs for fleet events; see listenOn. */
export function listenForEvents(
  db: Db,
  onEvent: (event: FleetEvent) => void,
  onEnd: (err: Error) => void,
): Promise<EventListener> {
  return listenOn(
    db,
    eventChannel,
    (payload) => {
      const p = JSON.parse(payload) as { event_id: number; type: EventType; id: string; data: Record<string, unknown> };
      onEvent({ eventId: p.event_id, type: p.type, id: p.id, data: p.data });
    },
    onEnd,
  );
}

import { and, arrayOverlaps, desc, eq, inArray, lt, or, type SQL } from 'drizzle-orm';
import type { FacilityEventKind, FacilityEventState, FacilitySeverity } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { facilityEvents, jobs, type FacilityEvent, type NewFacilityEvent } from '../schema/index.js';

/**
 * Records an event once per source and external id: a repeat inserts nothing and answers the first event
 * (`inserted: false`), however the two requests raced.
 */
export async function insertFacilityEvent(
  tx: DbOrTx,
  e: NewFacilityEvent,
): Promise<{ event: FacilityEvent; inserted: boolean }> {
  const [row] = await tx
    .insert(facilityEvents)
    .values(e)
    .onConflictDoNothing({ target: [facilityEvents.source, facilityEvents.externalId] })
    .returning();
  if (row) return { event: row, inserted: true };
  const [first] = await tx
    .select()
    .from(facilityEvents)
    .where(and(eq(facilityEvents.source, e.source), eq(facilityEvents.externalId, e.externalId)));
  return { event: first!, inserted: false };
}

export async function getFacilityEvent(db: DbOrTx, id: string): Promise<FacilityEvent | undefined> {
  const [row] = await db.select().from(facilityEvents).where(eq(facilityEvents.id, id));
  return row;
}

/** The event under a row lock for the rest of the transaction: one response step at a time. */
export async function lockFacilityEvent(tx: DbOrTx, id: string): Promise<FacilityEvent | undefined> {
  const [row] = await tx.select().from(facilityEvents).where(eq(facilityEvents.id, id)).for('update');
  return row;
}

export type FacilityEventChange = Partial<
  Pick<FacilityEvent, 'state' | 'actions' | 'jobIds' | 'decision' | 'decidedBy' | 'decidedAt' | 'decisionReason'>
>;

export async function updateFacilityEvent(tx: DbOrTx, id: string, change: FacilityEventChange): Promise<FacilityEvent> {
  const [row] = await tx
    .update(facilityEvents)
    .set({ ...change, updatedAt: new Date() })
    .where(eq(facilityEvents.id, id))
    .returning();
  return row!;
}

export interface FacilityEventPageQuery {
  limit: number;
  /** The last row of the previous page. */
  after?: { receivedAt: Date; id: string } | undefined;
  state?: FacilityEventState[] | undefined;
  kind?: FacilityEventKind[] | undefined;
  severity?: FacilitySeverity[] | undefined;
  /** Events naming any of these racks. */
  rackId?: string[] | undefined;
  source?: string[] | undefined;
}

/** Events newest first (received_at, then id), each filter a list ORed within and ANDed with the others. */
export async function listFacilityEvents(db: DbOrTx, q: FacilityEventPageQuery): Promise<FacilityEvent[]> {
  const c: SQL[] = [];
  if (q.state?.length) c.push(inArray(facilityEvents.state, q.state));
  if (q.kind?.length) c.push(inArray(facilityEvents.kind, q.kind));
  if (q.severity?.length) c.push(inArray(facilityEvents.severity, q.severity));
  if (q.rackId?.length) c.push(arrayOverlaps(facilityEvents.rackIds, q.rackId));
  if (q.source?.length) c.push(inArray(facilityEvents.source, q.source));
  if (q.after)
    c.push(
      or(
        lt(facilityEvents.receivedAt, q.after.receivedAt),
        and(eq(facilityEvents.receivedAt, q.after.receivedAt), lt(facilityEvents.id, q.after.id))!,
      )!,
    );
  return db
    .select()
    .from(facilityEvents)
    .where(c.length ? and(...c) : undefined)
    .orderBy(desc(facilityEvents.receivedAt), desc(facilityEvents.id))
    .limit(q.limit);
}

/** Ids of events whose power-off runs (a partial index holds just those). */
export async function facilityEventsPoweringOff(db: DbOrTx, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: facilityEvents.id })
    .from(facilityEvents)
    .where(eq(facilityEvents.state, 'powering_off'))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** The states of some jobs by id; a job that does not exist is absent. */
export async function jobStatesOf(db: DbOrTx, ids: readonly string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await db
    .select({ id: jobs.id, state: jobs.state })
    .from(jobs)
    .where(inArray(jobs.id, [...ids]));
  return new Map(rows.map((r) => [r.id, r.state]));
}

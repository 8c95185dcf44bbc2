import { and, desc, eq, inArray, lt } from 'drizzle-orm';
import { assertAxisWriter, type ConditionType, type DeviceAxis } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { translatingViolations } from '../errors.js';
import { deviceTransitions, type DeviceTransitionRow } from '../schema/index.js';

export interface TransitionRecord {
  deviceId: string;
  axis: DeviceAxis;
  /** For a condition's status change. */
  conditionType?: ConditionType | undefined;
  /** Null when the value first appeared. */
  from: string | null;
  to: string;
  writer: string;
  jobId?: string | null | undefined;
  /** CamelCase; the database refuses anything else (CheckViolation). */
  reason: string;
  message?: string | null | undefined;
  /** Defaults to the transaction's start. */
  at?: Date | undefined;
}

/**
 * Appends one row to a device's history; called in the transaction that made the change. Refuses a writer that does
 * not own the axis (AxisWriterRefused); a malformed reason is a CheckViolation.
 */
export async function recordTransition(tx: DbOrTx, r: TransitionRecord): Promise<DeviceTransitionRow> {
  assertAxisWriter(r.axis, r.writer);
  const [row] = await translatingViolations(
    tx
      .insert(deviceTransitions)
      .values({
        deviceId: r.deviceId,
        axis: r.axis,
        conditionType: r.conditionType ?? null,
        fromState: r.from,
        toState: r.to,
        writer: r.writer as DeviceTransitionRow['writer'],
        jobId: r.jobId ?? null,
        reason: r.reason,
        message: r.message ?? null,
        ...(r.at ? { at: r.at } : {}),
      })
      .returning(),
  );
  return row!;
}

export interface DeviceHistoryQuery {
  limit: number;
  /** `nextCursor` of the previous page. */
  cursor?: number | undefined;
  axis?: DeviceAxis[] | undefined;
}

export interface DeviceHistoryPage {
  items: DeviceTransitionRow[];
  /** Present when there may be more: pass it as `cursor`. */
  nextCursor?: number;
}

/** A device's transitions, newest first by id (the order they were written), a page at a time. */
export async function deviceHistory(db: DbOrTx, deviceId: string, q: DeviceHistoryQuery): Promise<DeviceHistoryPage> {
  const rows = await db
    .select()
    .from(deviceTransitions)
    .where(
      and(
        eq(deviceTransitions.deviceId, deviceId),
        q.axis?.length ? inArray(deviceTransitions.axis, q.axis) : undefined,
        q.cursor !== undefined ? lt(deviceTransitions.id, q.cursor) : undefined,
      ),
    )
    .orderBy(desc(deviceTransitions.id))
    .limit(q.limit + 1);
  const items = rows.slice(0, q.limit);
  return rows.length > q.limit ? { items, nextCursor: items.at(-1)!.id } : { items };
}

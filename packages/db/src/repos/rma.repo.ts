import { and, desc, eq, inArray, lt, ne, or, type SQL } from 'drizzle-orm';
import {
  partSwaps,
  rmaRefusal,
  RmaTransitionRefused,
  serialsOfRecord,
  type FleetLifecycleState,
  type RmaMove,
  type RmaMover,
  type RmaState,
} from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { deviceHardware, devices, rmaCases, type RmaCase } from '../schema/index.js';

/** A case as opened: by an operator, or by a remediation's escalation (`jobId`). */
export interface RmaOpening {
  deviceId: string;
  failedPart: string;
  faultClass?: string | null | undefined;
  reason: string;
  vendorCaseId?: string | null | undefined;
  jobId?: string | null | undefined;
  openedBy: string;
}

/**
 * Opens a case for the device, its serials taken from the device's last hardware read. When the device already has a
 * case not closed, or `jobId` opened one already, opens nothing and answers that case (`opened: false`). Undefined
 * when the device does not exist.
 */
export async function openRmaCase(
  tx: DbOrTx,
  o: RmaOpening,
): Promise<{ rmaCase: RmaCase; opened: boolean } | undefined> {
  const [device] = await tx
    .select({ siteId: devices.siteId, record: deviceHardware.record })
    .from(devices)
    .leftJoin(deviceHardware, eq(deviceHardware.deviceId, devices.id))
    .where(eq(devices.id, o.deviceId));
  if (!device) return undefined;
  const at = new Date();
  const opening: RmaMove = {
    from: null,
    to: 'open',
    at: at.toISOString(),
    by: o.openedBy,
    reason: o.reason,
    ...(o.jobId ? { jobId: o.jobId } : {}),
  };
  // A conflict loses to a case that a concurrent transaction may close before we read it: one more try then.
  for (let attempt = 0; attempt < 2; attempt++) {
    const [inserted] = await tx
      .insert(rmaCases)
      .values({
        deviceId: o.deviceId,
        siteId: device.siteId,
        failedPart: o.failedPart,
        faultClass: o.faultClass ?? null,
        reason: o.reason,
        vendorCaseId: o.vendorCaseId ?? null,
        openedBy: o.openedBy,
        jobId: o.jobId ?? null,
        oldSerials: device.record ? serialsOfRecord(device.record) : {},
        history: [opening],
        createdAt: at,
      })
      // The one-open-case-per-device and one-case-per-job indexes: either means there is a case to answer.
      .onConflictDoNothing()
      .returning();
    if (inserted) return { rmaCase: inserted, opened: true };
    const [existing] = await tx
      .select()
      .from(rmaCases)
      .where(
        o.jobId
          ? or(eq(rmaCases.jobId, o.jobId), and(eq(rmaCases.deviceId, o.deviceId), ne(rmaCases.state, 'closed')))
          : and(eq(rmaCases.deviceId, o.deviceId), ne(rmaCases.state, 'closed')),
      )
      .orderBy(desc(rmaCases.createdAt))
      .limit(1);
    if (existing) return { rmaCase: existing, opened: false };
  }
  throw new Error(`RMA case for device ${o.deviceId}: the insert conflicted with a case that no longer exists`);
}

/**
 * The draft a remediation that ran out of steps opens (the workflow agent, in the projection's transaction): once per
 * job however often the projection is applied, and nothing when the device has a case open already.
 */
export function openRmaDraft(
  tx: DbOrTx,
  draft: RmaOpening & { jobId: string },
): Promise<{ rmaCase: RmaCase; opened: boolean } | undefined> {
  return openRmaCase(tx, draft);
}

export async function getRmaCase(db: DbOrTx, id: string): Promise<RmaCase | undefined> {
  const [row] = await db.select().from(rmaCases).where(eq(rmaCases.id, id));
  return row;
}

/** The device's case that is not closed, if it has one. */
export async function openRmaCaseOf(db: DbOrTx, deviceId: string): Promise<RmaCase | undefined> {
  const [row] = await db
    .select()
    .from(rmaCases)
    .where(and(eq(rmaCases.deviceId, deviceId), ne(rmaCases.state, 'closed')));
  return row;
}

export interface RmaCasePageQuery {
  limit: number;
  /** The last row of the previous page. */
  after?: { createdAt: Date; id: string } | undefined;
  state?: RmaState[] | undefined;
  siteId?: string[] | undefined;
  deviceId?: string[] | undefined;
}

/** Cases newest first (created_at, then id), each filter a list ORed within and ANDed with the others. */
export async function listRmaCases(db: DbOrTx, q: RmaCasePageQuery): Promise<RmaCase[]> {
  const c: SQL[] = [];
  if (q.state?.length) c.push(inArray(rmaCases.state, q.state));
  if (q.siteId?.length) c.push(inArray(rmaCases.siteId, q.siteId));
  if (q.deviceId?.length) c.push(inArray(rmaCases.deviceId, q.deviceId));
  if (q.after)
    c.push(
      or(
        lt(rmaCases.createdAt, q.after.createdAt),
        and(eq(rmaCases.createdAt, q.after.createdAt), lt(rmaCases.id, q.after.id))!,
      )!,
    );
  return db
    .select()
    .from(rmaCases)
    .where(c.length ? and(...c) : undefined)
    .orderBy(desc(rmaCases.createdAt), desc(rmaCases.id))
    .limit(q.limit);
}

export interface RmaCaseChange {
  /** The state to move to; the state the case is in already moves nothing. */
  to?: RmaState | undefined;
  vendorCaseId?: string | null | undefined;
  mover: RmaMover;
  /** The operator's name, or `enrolment`. */
  by: string;
  reason?: string | undefined;
  /** The job the move started (shipping, return) or was seen in (the enrolment). */
  jobId?: string | undefined;
}

/**
 * Changes a case under a row lock: its vendor case id, and its state when the transition table lets `mover` make the
 * move (RmaTransitionRefused otherwise, naming the state it is in), with a history entry. Undefined when there is no
 * such case.
 */
export async function updateRmaCase(tx: DbOrTx, id: string, change: RmaCaseChange): Promise<RmaCase | undefined> {
  const [row] = await tx.select().from(rmaCases).where(eq(rmaCases.id, id)).for('update');
  if (!row) return undefined;
  return writeChange(tx, row, change);
}

async function writeChange(
  tx: DbOrTx,
  row: RmaCase,
  change: RmaCaseChange,
  extra: Partial<Pick<RmaCase, 'newSerials' | 'swap'>> = {},
): Promise<RmaCase> {
  const moves = change.to !== undefined && change.to !== row.state;
  if (moves) {
    const refused = rmaRefusal(row.state, change.to!, change.mover);
    if (refused) throw new RmaTransitionRefused(row.id, row.state, change.to!, refused);
  }
  if (!moves && change.vendorCaseId === undefined) return row;
  const at = new Date();
  const move: RmaMove | undefined = moves
    ? {
        from: row.state,
        to: change.to!,
        at: at.toISOString(),
        by: change.by,
        reason: change.reason ?? '',
        ...(change.jobId ? { jobId: change.jobId } : {}),
      }
    : undefined;
  const [updated] = await tx
    .update(rmaCases)
    .set({
      ...(change.vendorCaseId !== undefined ? { vendorCaseId: change.vendorCaseId } : {}),
      ...(move
        ? {
            state: move.to,
            history: [...row.history, move],
            ...(move.to === 'closed' ? { closedAt: at } : {}),
            ...extra,
          }
        : {}),
      updatedAt: at,
    })
    .where(eq(rmaCases.id, row.id))
    .returning();
  return updated!;
}

/** One device an enrolment or burn-in job reported on, as the workflow agent projects the job. */
export interface RmaRevalidationReport {
  deviceId: string;
  jobId: string;
  /** The job ended and succeeded. */
  succeeded: boolean;
}

/** A device in one of these is proven again: certified (or further), or enrolled by a job that ended well. */
const revalidatedStates: readonly FleetLifecycleState[] = ['certified', 'in_service'];

/**
 * What enrolments and burn-ins tell the cases of devices back from the vendor (call it in the projection's
 * transaction, after the lifecycle reports, so it sees the devices' new states and hardware reads): an enrolment
 * seen on a device whose case is `replaced` revalidates it; the device certified, or enrolled by a job that ended
 * well (a switch tray or power shelf enrolled on its own), closes it with the serials read now and the swap. One
 * statement when no device reported has such a case.
 */
export async function applyRmaRevalidation(tx: DbOrTx, reports: RmaRevalidationReport[]): Promise<RmaCase[]> {
  if (reports.length === 0) return [];
  const rows = await tx
    .select({ rmaCase: rmaCases, lifecycle: devices.fleetLifecycle, record: deviceHardware.record })
    .from(rmaCases)
    .innerJoin(devices, eq(devices.id, rmaCases.deviceId))
    .leftJoin(deviceHardware, eq(deviceHardware.deviceId, rmaCases.deviceId))
    .where(
      and(
        inArray(rmaCases.deviceId, [...new Set(reports.map((r) => r.deviceId))]),
        inArray(rmaCases.state, ['replaced', 'revalidating']),
      ),
    )
    .for('update', { of: rmaCases });
  const changed: RmaCase[] = [];
  for (const { rmaCase, lifecycle, record } of rows) {
    const mine = reports.filter((r) => r.deviceId === rmaCase.deviceId);
    const done = mine.find((r) => revalidatedStates.includes(lifecycle) || (r.succeeded && lifecycle === 'enrolled'));
    let row = rmaCase;
    if (row.state === 'replaced')
      row = await writeChange(tx, row, {
        to: 'revalidating',
        mover: 'enrolment',
        by: 'enrolment',
        reason: `enrolment job ${mine[0]!.jobId} started`,
        jobId: mine[0]!.jobId,
      });
    if (done) {
      const newSerials = record ? serialsOfRecord(record) : {};
      row = await writeChange(
        tx,
        row,
        {
          to: 'closed',
          mover: 'enrolment',
          by: 'enrolment',
          reason: `job ${done.jobId} left the device ${lifecycle}`,
          jobId: done.jobId,
        },
        { newSerials, swap: partSwaps(row.oldSerials, newSerials) },
      );
    }
    if (row !== rmaCase) changed.push(row);
  }
  return changed;
}

import { and, asc, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import {
  assertAxisWriter,
  heldLifecycleStates,
  LifecycleTransitionRefused,
  transition,
  type AxisWriter,
  type DeviceHold,
  type FleetLifecycleState,
  type HeldLifecycleState,
} from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { devices, deviceTransitions, type DeviceTransitionRow } from '../schema/index.js';
import { recordTransition } from './device-history.repo.js';

export interface SetLifecycleInput {
  deviceId: string;
  to: FleetLifecycleState;
  /** Must be `lifecycle-workflow`, the axis's one writer; typed wider so that a wrong writer is refused at run time. */
  writer: AxisWriter | (string & {});
  /** The lifecycle workflow's job (its Temporal workflow id). */
  jobId: string;
  /** CamelCase, e.g. BurnInPassed. */
  reason: string;
  message?: string | undefined;
}

export interface LifecycleChange {
  deviceId: string;
  from: FleetLifecycleState;
  to: FleetLifecycleState;
  /** False when this job had already made the move (a retried call). */
  changed: boolean;
  /** The history row written, when changed. */
  transition?: DeviceTransitionRow;
}

export async function getLifecycle(db: DbOrTx, deviceId: string): Promise<FleetLifecycleState | undefined> {
  const [row] = await db.select({ state: devices.fleetLifecycle }).from(devices).where(eq(devices.id, deviceId));
  return row?.state;
}

/**
 * Moves a device's lifecycle, checked against the transition table (docs/lifecycle.md). Refuses a writer that does not
 * own the lifecycle axis (AxisWriterRefused) and a move the table refuses (LifecycleTransitionRefused, naming the
 * current state). The device row is locked before its state is read, so of two concurrent calls the second sees the
 * first one's result; the history row is written in the same transaction. A call repeated by the job that already
 * made the move answers `changed: false`. Undefined when the device does not exist.
 */
export async function setLifecycle(db: DbOrTx, input: SetLifecycleInput): Promise<LifecycleChange | undefined> {
  assertAxisWriter('lifecycle', input.writer);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ state: devices.fleetLifecycle })
      .from(devices)
      .where(eq(devices.id, input.deviceId))
      .for('no key update');
    if (!row) return undefined;
    const from = row.state;
    const base = { deviceId: input.deviceId, from, to: input.to };
    if (from === input.to && (await lastMoveWasBy(tx, input.deviceId, input.to, input.jobId)))
      return { ...base, changed: false };
    const checked = transition(from, input.to);
    if (!checked.ok) throw new LifecycleTransitionRefused(checked.refusal);
    await tx
      .update(devices)
      .set({ fleetLifecycle: input.to, updatedAt: new Date() })
      .where(eq(devices.id, input.deviceId));
    const written = await recordTransition(tx, {
      deviceId: input.deviceId,
      axis: 'lifecycle',
      from,
      to: input.to,
      writer: input.writer,
      jobId: input.jobId,
      reason: input.reason,
      message: input.message,
    });
    return { ...base, changed: true, transition: written };
  });
}

/** Whether the device's last lifecycle move was `jobId`'s, to `to`. */
async function lastMoveWasBy(tx: DbOrTx, deviceId: string, to: string, jobId: string): Promise<boolean> {
  const [last] = await tx
    .select({ toState: deviceTransitions.toState, jobId: deviceTransitions.jobId })
    .from(deviceTransitions)
    .where(and(eq(deviceTransitions.deviceId, deviceId), eq(deviceTransitions.axis, 'lifecycle')))
    .orderBy(desc(deviceTransitions.id))
    .limit(1);
  return last?.toState === to && last.jobId === jobId;
}

/**
 * Of `deviceIds`, the held ones (quarantined, remediating, rma) by name, each with the lifecycle move that put it in
 * its state (since, reason, message, job): one statement, one probe of device_transitions_lifecycle_device_id_id_idx
 * per held device. A device whose last move is not into its state (written around the repository) has no reason.
 */
export async function heldDevices(db: DbOrTx, deviceIds: readonly string[]): Promise<DeviceHold[]> {
  if (deviceIds.length === 0) return [];
  const last = db
    .select({
      toState: deviceTransitions.toState,
      at: deviceTransitions.at,
      reason: deviceTransitions.reason,
      message: deviceTransitions.message,
      jobId: deviceTransitions.jobId,
    })
    .from(deviceTransitions)
    .where(
      and(
        eq(deviceTransitions.deviceId, devices.id),
        eq(deviceTransitions.axis, 'lifecycle'),
        isNull(deviceTransitions.conditionType),
      ),
    )
    .orderBy(desc(deviceTransitions.id))
    .limit(1)
    .as('last_move');
  const rows = await db
    .select({
      deviceId: devices.id,
      name: devices.name,
      state: devices.fleetLifecycle,
      createdAt: devices.createdAt,
      toState: last.toState,
      at: last.at,
      reason: last.reason,
      message: last.message,
      jobId: last.jobId,
    })
    .from(devices)
    .leftJoinLateral(last, sql`true`)
    .where(
      and(
        // One array parameter however many ids (a batch takes 10,000).
        sql`${devices.id} = any(${sql.param([...deviceIds])}::uuid[])`,
        inArray(devices.fleetLifecycle, [...heldLifecycleStates]),
      ),
    )
    .orderBy(asc(devices.name), asc(devices.id));
  return rows.map((r) => {
    const moved = r.toState === r.state;
    return {
      deviceId: r.deviceId,
      name: r.name,
      state: r.state as HeldLifecycleState,
      since: (moved ? r.at : null) ?? r.createdAt,
      reason: moved ? r.reason : null,
      message: moved ? r.message : null,
      jobId: moved ? r.jobId : null,
    };
  });
}

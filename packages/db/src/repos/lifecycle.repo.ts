import { and, desc, eq } from 'drizzle-orm';
import {
  assertAxisWriter,
  LifecycleTransitionRefused,
  transition,
  type AxisWriter,
  type FleetLifecycleState,
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

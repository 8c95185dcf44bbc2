import { and, asc, eq } from 'drizzle-orm';
import {
  applyCondition,
  assertAxisWriter,
  conditionReportProblem,
  ConditionReportInvalid,
  conditionTable,
  type AxisWriter,
  type ConditionReport,
  type ConditionStatus,
  type ConditionType,
  type ConditionUpdate,
  type DeviceAxis,
  type DeviceCondition,
} from '@fleet/domain';
import type { DbOrTx, Tx } from '../client.js';
import { translatingViolations } from '../errors.js';
import { deviceConditions, devices, type DeviceConditionRow } from '../schema/index.js';
import { recordTransition } from './device-history.repo.js';

export interface SetConditionInput {
  deviceId: string;
  type: ConditionType;
  status: ConditionStatus;
  /** CamelCase. */
  reason: string;
  message?: string | undefined;
  /** Defaults to 0; a report older than the stored condition is ignored. */
  observedGeneration?: number | undefined;
  /** Must own the condition type's axis (conditionTable, axisTable). */
  writer: AxisWriter | (string & {});
  jobId?: string | null | undefined;
}

const toCondition = (r: DeviceConditionRow): DeviceCondition => ({
  type: r.type,
  status: r.status,
  reason: r.reason,
  message: r.message,
  lastTransitionTime: r.lastTransitionTime,
  observedGeneration: r.observedGeneration,
});

/** A device's conditions, by type. */
export async function listConditions(db: DbOrTx, deviceId: string): Promise<DeviceCondition[]> {
  const rows = await db
    .select()
    .from(deviceConditions)
    .where(eq(deviceConditions.deviceId, deviceId))
    .orderBy(asc(deviceConditions.type));
  return rows.map(toCondition);
}

/**
 * Sets one condition with Kubernetes semantics (applyCondition: lastTransitionTime moves only when status does).
 * Refuses a writer that does not own the type's axis (AxisWriterRefused) and a malformed report
 * (ConditionReportInvalid). The condition row is locked while it is compared and written, and a status change writes a
 * history row in the same transaction. Undefined when the device does not exist.
 */
export async function setCondition(db: DbOrTx, input: SetConditionInput): Promise<ConditionUpdate | undefined> {
  const axis = conditionTable[input.type].axis;
  assertAxisWriter(axis, input.writer);
  const report: ConditionReport = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message ?? '',
    observedGeneration: input.observedGeneration ?? 0,
  };
  const problem = conditionReportProblem(report);
  if (problem) throw new ConditionReportInvalid(problem);

  return db.transaction(async (tx) => {
    const [device] = await tx.select({ id: devices.id }).from(devices).where(eq(devices.id, input.deviceId));
    if (!device) return undefined;
    let now = new Date();
    let previous = await lockedCondition(tx, input.deviceId, input.type);
    // A first report inserts; if another writer inserted the row meanwhile, compare with theirs (it is locked now).
    for (let attempt = 0; !previous && attempt < 3; attempt++) {
      const fresh = applyCondition(undefined, report, now);
      const [inserted] = await translatingViolations(
        tx
          .insert(deviceConditions)
          .values({ deviceId: input.deviceId, ...fresh.condition, updatedAt: now })
          .onConflictDoNothing()
          .returning(),
      );
      if (inserted) {
        await record(tx, input, axis, null, fresh.condition, now);
        return fresh;
      }
      previous = await lockedCondition(tx, input.deviceId, input.type);
    }
    if (!previous) throw new Error(`condition ${input.type} of device ${input.deviceId} neither inserted nor found`);
    now = new Date(); // read under the lock: a writer that waited does not stamp a time before the one it follows
    const update = applyCondition(previous, report, now);
    if (update.stale) return update;
    await translatingViolations(
      tx
        .update(deviceConditions)
        .set({ ...update.condition, updatedAt: now })
        .where(and(eq(deviceConditions.deviceId, input.deviceId), eq(deviceConditions.type, input.type))),
    );
    if (update.transitioned) await record(tx, input, axis, previous.status, update.condition, now);
    return update;
  });
}

async function lockedCondition(tx: Tx, deviceId: string, type: ConditionType): Promise<DeviceCondition | undefined> {
  const [row] = await tx
    .select()
    .from(deviceConditions)
    .where(and(eq(deviceConditions.deviceId, deviceId), eq(deviceConditions.type, type)))
    .for('update');
  return row && toCondition(row);
}

function record(
  tx: Tx,
  input: SetConditionInput,
  axis: DeviceAxis,
  from: ConditionStatus | null,
  condition: DeviceCondition,
  at: Date,
) {
  return recordTransition(tx, {
    deviceId: input.deviceId,
    axis,
    conditionType: condition.type,
    from,
    to: condition.status,
    writer: input.writer,
    jobId: input.jobId,
    reason: condition.reason,
    message: condition.message || null,
    at,
  });
}

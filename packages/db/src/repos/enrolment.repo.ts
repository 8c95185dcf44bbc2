import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import {
  enrolmentConditionWriters,
  LifecycleTransitionRefused,
  type HardwareRecord,
  type LifecycleMemo,
} from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { deviceHardware, deviceTransitions, type DeviceHardwareRow } from '../schema/index.js';
import { setCondition } from './conditions.repo.js';
import { setLifecycle } from './lifecycle.repo.js';
import { refreshInventoryIssues } from './netbox-sync.repo.js';

/** What one lifecycle job's memo reports (workflow memo keys fleet_lifecycle and fleet_hardware). */
export interface LifecycleJobReport {
  jobId: string;
  lifecycle: LifecycleMemo;
  hardware: Record<string, HardwareRecord>;
}

export interface LifecycleApplyStats {
  moves: number;
  conditions: number;
  hardware: number;
  /** Moves the transition table refused (the device was moved by something else meanwhile): logged, not applied. */
  refused: { jobId: string; deviceId: string; message: string }[];
}

/**
 * Applies what lifecycle workflows report, as the writers that own each part: the lifecycle moves as
 * `lifecycle-workflow` (each checked against the transition table; the moves this job's history already holds are
 * skipped, so a report applied twice moves nothing twice), the conditions as their observers
 * (enrolmentConditionWriters), and the hardware read. A serial that differs from NetBox's becomes an inventory issue
 * at once. Call inside the projector's page transaction.
 */
export async function applyLifecycleReports(tx: DbOrTx, reports: LifecycleJobReport[]): Promise<LifecycleApplyStats> {
  const stats: LifecycleApplyStats = { moves: 0, conditions: 0, hardware: 0, refused: [] };
  if (reports.length === 0) return stats;
  const done = await movesMadeBy(
    tx,
    reports.map((r) => r.jobId),
  );
  for (const r of reports) {
    for (const [deviceId, device] of Object.entries(r.lifecycle.devices)) {
      for (const move of device.moves.slice(done.get(`${r.jobId}/${deviceId}`) ?? 0)) {
        try {
          const change = await setLifecycle(tx, {
            deviceId,
            to: move.to,
            writer: 'lifecycle-workflow',
            jobId: r.jobId,
            reason: move.reason,
            message: move.message,
          });
          if (change?.changed) stats.moves++;
        } catch (err) {
          if (!(err instanceof LifecycleTransitionRefused)) throw err;
          stats.refused.push({ jobId: r.jobId, deviceId, message: err.message });
          break;
        }
      }
      for (const [type, c] of Object.entries(device.conditions)) {
        const writer = enrolmentConditionWriters[type as keyof typeof enrolmentConditionWriters];
        const update = await setCondition(tx, {
          deviceId,
          type: type as keyof typeof enrolmentConditionWriters,
          status: c.status,
          reason: c.reason,
          message: c.message,
          writer,
          jobId: r.jobId,
        });
        if (update?.transitioned) stats.conditions++;
      }
    }
    stats.hardware += await upsertHardware(tx, r.jobId, r.hardware);
  }
  if (stats.hardware > 0) await refreshInventoryIssues(tx, { issues: [], settled: [] });
  return stats;
}

/** How many lifecycle moves each job made on each device so far (`<job>/<device>` → count). */
async function movesMadeBy(tx: DbOrTx, jobIds: string[]): Promise<Map<string, number>> {
  const rows = await tx
    .select({ jobId: deviceTransitions.jobId, deviceId: deviceTransitions.deviceId, n: sql<number>`count(*)::int` })
    .from(deviceTransitions)
    .where(
      and(
        inArray(deviceTransitions.jobId, jobIds),
        eq(deviceTransitions.axis, 'lifecycle'),
        isNull(deviceTransitions.conditionType),
      ),
    )
    .groupBy(deviceTransitions.jobId, deviceTransitions.deviceId);
  return new Map(rows.map((r) => [`${r.jobId}/${r.deviceId}`, Number(r.n)]));
}

/** Stores each record unless a newer read of the device is already there. Returns how many were written. */
async function upsertHardware(tx: DbOrTx, jobId: string, records: Record<string, HardwareRecord>): Promise<number> {
  const rows = Object.entries(records).map(([deviceId, record]) => ({
    deviceId,
    jobId,
    readAt: new Date(record.readAt),
    digest: record.document.digest,
    serialNumber: record.serialNumber ?? null,
    record,
  }));
  if (rows.length === 0) return 0;
  const written = await tx
    .insert(deviceHardware)
    .values(rows)
    .onConflictDoUpdate({
      target: deviceHardware.deviceId,
      set: {
        jobId: sql`excluded.job_id`,
        readAt: sql`excluded.read_at`,
        digest: sql`excluded.digest`,
        serialNumber: sql`excluded.serial_number`,
        record: sql`excluded.record`,
        updatedAt: sql`now()`,
      },
      setWhere: sql`${deviceHardware.readAt} < excluded.read_at`,
    })
    .returning({ deviceId: deviceHardware.deviceId });
  return written.length;
}

/** The device's last hardware read, if an enrolment has read it. */
export async function getDeviceHardware(db: DbOrTx, deviceId: string): Promise<DeviceHardwareRow | undefined> {
  const [row] = await db.select().from(deviceHardware).where(eq(deviceHardware.deviceId, deviceId));
  return row;
}

import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import {
  applyCondition,
  healthConditions,
  sameHealth,
  type DeviceCondition,
  type HealthReading,
  type PowerState,
} from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { deviceConditions, deviceHealth, devices, deviceTransitions, type DeviceHealthRow } from '../schema/index.js';

/** One reading a site's observer delivered. */
export interface HealthDelivery {
  deviceId: string;
  observedAt: Date;
  reading: HealthReading;
}

export interface HealthApplyStats {
  /** Readings stored (new, changed or confirmed). */
  applied: number;
  /** Readings that say something new: their conditions were judged again. */
  changed: number;
  /** Readings older than the stored one: ignored. */
  stale: number;
  /** Ids that are no device of the site (deleted, another site's, never mirrored): ignored, and named. */
  unknown: string[];
  /** Condition status changes written to the devices' history. */
  transitions: number;
  /** Devices whose stored reading now names a fault (new, changed or confirmed): what quarantine rules look at. */
  faulty: string[];
}

const readingOf = (row: DeviceHealthRow): HealthReading => ({
  reachable: row.reachable,
  ...(row.credentialsOk === null ? {} : { credentialsOk: row.credentialsOk }),
  ...(row.powerState === null ? {} : { powerState: row.powerState as PowerState }),
  faults: row.faults,
});

/**
 * Stores a batch of a site's health readings in the caller's transaction, a few statements for the whole batch: the
 * reading per device (a repeat counts an observation), the power state when the BMC answered, and the health axis's
 * conditions (BMCReachable, CredentialsVerified, Healthy) with Kubernetes semantics and a history row per status
 * change, written as the `satellite`, the health axis's one writer. Readings are state, not events: an older one than
 * stored is ignored, a repeat changes no condition.
 */
export async function applyHealthReadings(
  tx: DbOrTx,
  siteId: string,
  deliveries: HealthDelivery[],
): Promise<HealthApplyStats> {
  const stats: HealthApplyStats = { applied: 0, changed: 0, stale: 0, unknown: [], transitions: 0, faulty: [] };
  if (deliveries.length === 0) return stats;
  // The newest delivery per device, should a batch hold two.
  const latest = new Map<string, HealthDelivery>();
  for (const d of deliveries) {
    const prior = latest.get(d.deviceId);
    if (!prior || prior.observedAt < d.observedAt) latest.set(d.deviceId, d);
  }
  const ids = [...latest.keys()];
  const uuids = ids.filter((id) => uuidPattern.test(id));
  const known = new Set(
    uuids.length === 0
      ? []
      : (
          await tx
            .select({ id: devices.id })
            .from(devices)
            .where(and(inArray(devices.id, uuids), eq(devices.siteId, siteId), isNull(devices.deletedAt)))
            .for('no key update')
        ).map((r) => r.id),
  );
  stats.unknown = ids.filter((id) => !known.has(id));
  if (known.size === 0) return stats;
  const stored = new Map(
    (
      await tx
        .select()
        .from(deviceHealth)
        .where(inArray(deviceHealth.deviceId, [...known]))
    ).map((r) => [r.deviceId, r]),
  );

  const rows: (typeof deviceHealth.$inferInsert)[] = [];
  const changed: HealthDelivery[] = [];
  for (const id of known) {
    const d = latest.get(id)!;
    const prior = stored.get(id);
    if (prior && prior.observedAt >= d.observedAt) {
      stats.stale++;
      continue;
    }
    const same = prior !== undefined && sameHealth(readingOf(prior), d.reading);
    rows.push({
      deviceId: id,
      reachable: d.reading.reachable,
      credentialsOk: d.reading.credentialsOk ?? null,
      powerState: d.reading.powerState ?? null,
      faults: d.reading.faults,
      observedAt: d.observedAt,
      changedAt: same ? prior.changedAt : d.observedAt,
      observations: same ? prior.observations + 1 : 1,
    });
    if (!same) changed.push(d);
  }
  stats.applied = rows.length;
  stats.changed = changed.length;
  stats.faulty = rows.filter((r) => r.faults && r.faults.length > 0).map((r) => r.deviceId);
  if (rows.length === 0) return stats;
  await tx
    .insert(deviceHealth)
    .values(rows)
    .onConflictDoUpdate({
      target: deviceHealth.deviceId,
      set: {
        reachable: sql`excluded.reachable`,
        credentialsOk: sql`excluded.credentials_ok`,
        powerState: sql`excluded.power_state`,
        faults: sql`excluded.faults`,
        observedAt: sql`excluded.observed_at`,
        changedAt: sql`excluded.changed_at`,
        observations: sql`excluded.observations`,
      },
    });
  if (changed.length === 0) return stats;

  // The power axis: what the BMC said, unless a newer reading (a power job's) is stored already.
  const powered = changed.filter((d) => d.reading.powerState);
  if (powered.length)
    await tx.execute(sql`
      update devices d set power_state = r.power_state, power_state_at = r.at, updated_at = now()
      from jsonb_to_recordset(${JSON.stringify(
        powered.map((d) => ({ id: d.deviceId, power_state: d.reading.powerState, at: d.observedAt.toISOString() })),
      )}::jsonb) as r(id uuid, power_state text, at timestamptz)
      where d.id = r.id and d.power_state is distinct from r.power_state
        and (d.power_state_at is null or d.power_state_at <= r.at)`);

  stats.transitions = await applyHealthConditions(tx, changed);
  return stats;
}

/** The health axis's conditions of the changed readings: one read, one upsert, one history insert. */
async function applyHealthConditions(tx: DbOrTx, changed: HealthDelivery[]): Promise<number> {
  const types = ['BMCReachable', 'CredentialsVerified', 'Healthy'] as const;
  const current = await tx
    .select()
    .from(deviceConditions)
    .where(
      and(
        inArray(
          deviceConditions.deviceId,
          changed.map((d) => d.deviceId),
        ),
        inArray(deviceConditions.type, [...types]),
      ),
    )
    .for('update');
  const key = (deviceId: string, type: string) => `${deviceId}/${type}`;
  const previous = new Map<string, DeviceCondition>(current.map((c) => [key(c.deviceId, c.type), c]));
  const upserts: (typeof deviceConditions.$inferInsert)[] = [];
  const history: (typeof deviceTransitions.$inferInsert)[] = [];
  const now = new Date();
  for (const d of changed) {
    for (const report of healthConditions(d.reading)) {
      const prior = previous.get(key(d.deviceId, report.type));
      const update = applyCondition(prior, { ...report, observedGeneration: 0 }, now);
      if (
        prior &&
        !update.transitioned &&
        prior.reason === update.condition.reason &&
        prior.message === update.condition.message
      )
        continue;
      upserts.push({ deviceId: d.deviceId, ...update.condition, updatedAt: now });
      if (update.transitioned)
        history.push({
          deviceId: d.deviceId,
          axis: 'health',
          conditionType: report.type,
          fromState: prior?.status ?? null,
          toState: report.status,
          writer: 'satellite',
          reason: report.reason,
          message: report.message || null,
          at: now,
        });
    }
  }
  if (upserts.length)
    await tx
      .insert(deviceConditions)
      .values(upserts)
      .onConflictDoUpdate({
        target: [deviceConditions.deviceId, deviceConditions.type],
        set: {
          status: sql`excluded.status`,
          reason: sql`excluded.reason`,
          message: sql`excluded.message`,
          lastTransitionTime: sql`excluded.last_transition_time`,
          observedGeneration: sql`excluded.observed_generation`,
          updatedAt: sql`excluded.updated_at`,
        },
      });
  if (history.length) await tx.insert(deviceTransitions).values(history);
  return history.length;
}

/** A device's last delivered reading, with when it was observed and since when it says so. */
export async function getDeviceHealth(db: DbOrTx, deviceId: string): Promise<DeviceHealthRow | undefined> {
  const [row] = await db.select().from(deviceHealth).where(eq(deviceHealth.deviceId, deviceId));
  return row;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A device the site's observer can read: it has a node type, a BMC address and a credential reference. */
export interface ObservationTarget {
  deviceId: string;
  nodeType: string;
  bmcUrl: string;
  credentialRef: string;
  redfishSystemId: string | null;
}

/** A page of a site's observable devices, by id after `afterId`. */
export async function listObservationTargets(
  db: DbOrTx,
  siteId: string,
  limit: number,
  afterId?: string,
): Promise<ObservationTarget[]> {
  const rows = await db
    .select({
      deviceId: devices.id,
      nodeType: devices.nodeType,
      bmcUrl: devices.bmcUrl,
      credentialRef: devices.credentialRef,
      redfishSystemId: devices.redfishSystemId,
    })
    .from(devices)
    .where(
      and(
        eq(devices.siteId, siteId),
        isNull(devices.deletedAt),
        sql`${devices.nodeType} is not null and ${devices.bmcUrl} is not null and ${devices.credentialRef} is not null`,
        afterId ? sql`${devices.id} > ${afterId}` : undefined,
      ),
    )
    .orderBy(devices.id)
    .limit(limit);
  return rows as ObservationTarget[];
}

/** The stored readings of `deviceIds` with their device's lifecycle, rack and node type: what the rules judge. */
export async function healthForRules(db: DbOrTx, deviceIds: string[]) {
  if (deviceIds.length === 0) return [];
  return db
    .select({
      deviceId: deviceHealth.deviceId,
      reachable: deviceHealth.reachable,
      credentialsOk: deviceHealth.credentialsOk,
      powerState: deviceHealth.powerState,
      faults: deviceHealth.faults,
      observedAt: deviceHealth.observedAt,
      changedAt: deviceHealth.changedAt,
      observations: deviceHealth.observations,
      name: devices.name,
      siteId: devices.siteId,
      rackId: devices.rackId,
      nodeType: devices.nodeType,
      lifecycle: devices.fleetLifecycle,
    })
    .from(deviceHealth)
    .innerJoin(devices, eq(devices.id, deviceHealth.deviceId))
    .where(inArray(deviceHealth.deviceId, deviceIds));
}

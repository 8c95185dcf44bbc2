import { and, eq, inArray, sql } from 'drizzle-orm';
import type { ComponentVersion, FirmwareStep, MaintenanceWindowSpec } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { campaigns, firmwareManifests, firmwarePackages, maintenanceWindows, type Campaign } from '../schema/index.js';

/** A manifest as a workflow runs it: steps with their packages by digest. */
export interface ResolvedManifest {
  id: string;
  hardwareType: string;
  steps: FirmwareStep[];
  /** Every component the manifest names: a device that lacks one is the wrong hardware. */
  expectedInventory: string[];
}

/** Manifests by id with their packages, in two queries; a manifest whose package is gone is left out. */
export async function resolveManifests(db: DbOrTx, ids: string[]): Promise<Map<string, ResolvedManifest>> {
  const out = new Map<string, ResolvedManifest>();
  if (!ids.length) return out;
  const manifests = await db
    .select()
    .from(firmwareManifests)
    .where(inArray(firmwareManifests.id, [...new Set(ids)]));
  const packageIds = [...new Set(manifests.flatMap((m) => m.steps.map((s) => s.packageId)))];
  const packages = packageIds.length
    ? await db.select().from(firmwarePackages).where(inArray(firmwarePackages.id, packageIds))
    : [];
  const byId = new Map(packages.map((p) => [p.id, p]));
  for (const m of manifests) {
    const steps: FirmwareStep[] = [];
    for (const s of m.steps) {
      const pkg = byId.get(s.packageId);
      if (!pkg) break;
      steps.push({
        name: s.name,
        targets: s.targets,
        components: s.components,
        packageDigest: pkg.digest,
        packageSize: pkg.sizeBytes,
        fileName: pkg.fileName,
      });
    }
    if (steps.length !== m.steps.length) continue;
    out.set(m.id, {
      id: m.id,
      hardwareType: m.hardwareType,
      steps,
      expectedInventory: [...new Set(m.steps.flatMap((s) => s.components.map((c) => c.id)))],
    });
  }
  return out;
}

/** The default manifest of each of these hardware types that has one (resolved), by hardware type. */
export async function resolveDefaultManifests(
  db: DbOrTx,
  hardwareTypes: string[],
): Promise<Map<string, ResolvedManifest>> {
  if (!hardwareTypes.length) return new Map();
  const rows = await db
    .select({ id: firmwareManifests.id })
    .from(firmwareManifests)
    .where(
      and(eq(firmwareManifests.isDefault, true), inArray(firmwareManifests.hardwareType, [...new Set(hardwareTypes)])),
    );
  const resolved = await resolveManifests(
    db,
    rows.map((r) => r.id),
  );
  return new Map([...resolved.values()].map((m) => [m.hardwareType, m]));
}

export async function getCampaignRow(db: DbOrTx, id: string): Promise<Campaign | undefined> {
  return db.query.campaigns.findFirst({ where: eq(campaigns.id, id) });
}

export async function siteMaintenanceWindows(db: DbOrTx, siteId: string): Promise<MaintenanceWindowSpec[]> {
  const rows = await db.select().from(maintenanceWindows).where(eq(maintenanceWindows.siteId, siteId));
  return rows.map((r) => ({ weekdays: r.weekdays, startMinute: r.startMinute, durationMinutes: r.durationMinutes }));
}

/** Installed versions a workflow reported, newest reading wins; one statement for the whole page. */
export async function recordDeviceFirmware(
  db: DbOrTx,
  readings: { deviceId: string; jobId: string; at: Date; components: ComponentVersion[] }[],
): Promise<void> {
  const rows = readings.flatMap((r) =>
    r.components.map((c) => ({
      deviceId: r.deviceId,
      componentId: c.id,
      version: c.version,
      observedAt: r.at.toISOString(),
      jobId: r.jobId,
    })),
  );
  if (!rows.length) return;
  await db.execute(sql`
    insert into device_firmware (device_id, component_id, version, observed_at, job_id)
    select r."deviceId", r."componentId", r."version", r."observedAt", r."jobId"
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      as r("deviceId" uuid, "componentId" text, "version" text, "observedAt" timestamptz, "jobId" uuid)
    on conflict (device_id, component_id) do update
      set version = excluded.version, observed_at = excluded.observed_at, job_id = excluded.job_id
      where device_firmware.observed_at <= excluded.observed_at`);
}

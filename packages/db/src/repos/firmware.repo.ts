import { and, asc, desc, eq, gt, inArray, lt, ne, or, sql, type SQL } from 'drizzle-orm';
import type { ManifestStep } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { translatingViolations } from '../errors.js';
import {
  deviceCompliance,
  devices,
  firmwareManifests,
  firmwarePackages,
  type FirmwareManifest,
  type FirmwarePackage,
} from '../schema/index.js';

// ---- Packages ----

/** Inserts a package; undefined when one with the same digest exists already. */
export async function insertFirmwarePackage(
  db: DbOrTx,
  pkg: typeof firmwarePackages.$inferInsert,
): Promise<FirmwarePackage | undefined> {
  const [row] = await db
    .insert(firmwarePackages)
    .values(pkg)
    .onConflictDoNothing({ target: firmwarePackages.digest })
    .returning();
  return row;
}

export async function getFirmwarePackage(db: DbOrTx, id: string): Promise<FirmwarePackage | undefined> {
  return db.query.firmwarePackages.findFirst({ where: eq(firmwarePackages.id, id) });
}

export async function getFirmwarePackageByDigest(db: DbOrTx, digest: string): Promise<FirmwarePackage | undefined> {
  return db.query.firmwarePackages.findFirst({ where: eq(firmwarePackages.digest, digest) });
}

export interface FirmwarePackagePageQuery {
  limit: number;
  after?: { createdAt: Date; id: string };
  digest?: string[];
  fileName?: string[];
  packageVersion?: string[];
}

/** Newest first, keyset on (created_at, id). */
export async function listFirmwarePackages(db: DbOrTx, q: FirmwarePackagePageQuery): Promise<FirmwarePackage[]> {
  const c: SQL[] = [];
  if (q.digest?.length) c.push(inArray(firmwarePackages.digest, q.digest));
  if (q.fileName?.length) c.push(inArray(firmwarePackages.fileName, q.fileName));
  if (q.packageVersion?.length) c.push(inArray(firmwarePackages.packageVersion, q.packageVersion));
  if (q.after) {
    const { createdAt, id } = q.after;
    c.push(
      or(
        lt(firmwarePackages.createdAt, createdAt),
        and(eq(firmwarePackages.createdAt, createdAt), lt(firmwarePackages.id, id)),
      )!,
    );
  }
  return db
    .select()
    .from(firmwarePackages)
    .where(c.length ? and(...c) : undefined)
    .orderBy(desc(firmwarePackages.createdAt), desc(firmwarePackages.id))
    .limit(q.limit);
}

/**
 * The packages with these ids, locked against deletion until the transaction ends, so a
 * manifest never commits a reference to a package deleted meanwhile.
 */
export async function lockFirmwarePackages(tx: DbOrTx, ids: string[]): Promise<FirmwarePackage[]> {
  if (!ids.length) return [];
  return tx.select().from(firmwarePackages).where(inArray(firmwarePackages.id, ids)).for('share');
}

/** Names of the manifests whose steps use a package (at most `limit`). */
export async function manifestsUsingPackage(db: DbOrTx, packageId: string, limit = 5): Promise<string[]> {
  const rows = await db
    .select({ name: firmwareManifests.name })
    .from(firmwareManifests)
    .where(sql`${firmwareManifests.steps} @> ${JSON.stringify([{ packageId }])}::jsonb`)
    .orderBy(asc(firmwareManifests.name))
    .limit(limit);
  return rows.map((r) => r.name);
}

export async function deleteFirmwarePackage(tx: DbOrTx, id: string): Promise<FirmwarePackage | undefined> {
  const [row] = await tx.delete(firmwarePackages).where(eq(firmwarePackages.id, id)).returning();
  return row;
}

// ---- Manifests ----

export interface ManifestFields {
  name: string;
  hardwareType: string;
  steps: ManifestStep[];
}

/**
 * Serialises default changes per hardware type for the rest of the transaction: the partial
 * unique index would otherwise turn two concurrent swaps into a constraint error.
 */
async function lockDefaultOf(tx: DbOrTx, hardwareType: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`firmware-default:${hardwareType}`}))`);
}

/** Clears the current default of a hardware type (bumping its revision); call with its lock held. */
async function clearDefault(tx: DbOrTx, hardwareType: string, except?: string): Promise<void> {
  await tx
    .update(firmwareManifests)
    .set({ isDefault: false, revision: sql`${firmwareManifests.revision} + 1`, updatedAt: new Date() })
    .where(
      and(
        eq(firmwareManifests.hardwareType, hardwareType),
        eq(firmwareManifests.isDefault, true),
        except ? ne(firmwareManifests.id, except) : undefined,
      ),
    );
}

/**
 * Inserts a manifest, taking over as its type's default when asked; run inside a transaction. A name in use is a
 * UniqueViolation of uniqueIndexes.manifestName (so is a rename to one, in updateFirmwareManifest).
 */
export async function insertFirmwareManifest(
  tx: DbOrTx,
  m: ManifestFields & { isDefault: boolean; createdBy: string },
): Promise<FirmwareManifest> {
  if (m.isDefault) {
    await lockDefaultOf(tx, m.hardwareType);
    await clearDefault(tx, m.hardwareType);
  }
  const [row] = await translatingViolations(tx.insert(firmwareManifests).values(m).returning());
  return row!;
}

export async function getFirmwareManifest(db: DbOrTx, id: string): Promise<FirmwareManifest | undefined> {
  return db.query.firmwareManifests.findFirst({ where: eq(firmwareManifests.id, id) });
}

/** A manifest locked for change until the transaction ends, so a revision check holds until the write. */
export async function lockFirmwareManifest(tx: DbOrTx, id: string): Promise<FirmwareManifest | undefined> {
  const [row] = await tx.select().from(firmwareManifests).where(eq(firmwareManifests.id, id)).for('update');
  return row;
}

export interface FirmwareManifestPageQuery {
  limit: number;
  /** Keyset position: the name of the last manifest of the previous page (names are unique). */
  afterName?: string;
  hardwareType?: string[];
  isDefault?: boolean;
}

export async function listFirmwareManifests(db: DbOrTx, q: FirmwareManifestPageQuery): Promise<FirmwareManifest[]> {
  const c: SQL[] = [];
  if (q.hardwareType?.length) c.push(inArray(firmwareManifests.hardwareType, q.hardwareType));
  if (q.isDefault !== undefined) c.push(eq(firmwareManifests.isDefault, q.isDefault));
  if (q.afterName !== undefined) c.push(gt(firmwareManifests.name, q.afterName));
  return db
    .select()
    .from(firmwareManifests)
    .where(c.length ? and(...c) : undefined)
    .orderBy(asc(firmwareManifests.name))
    .limit(q.limit);
}

/** Replaces a manifest's fields and bumps its revision. */
export async function updateFirmwareManifest(
  tx: DbOrTx,
  id: string,
  fields: ManifestFields,
): Promise<FirmwareManifest> {
  const [row] = await translatingViolations(
    tx
      .update(firmwareManifests)
      .set({ ...fields, revision: sql`${firmwareManifests.revision} + 1`, updatedAt: new Date() })
      .where(eq(firmwareManifests.id, id))
      .returning(),
  );
  return row!;
}

/** Makes a manifest its hardware type's default, in place of the previous one; run inside a transaction. */
export async function makeDefaultFirmwareManifest(tx: DbOrTx, manifest: FirmwareManifest): Promise<FirmwareManifest> {
  if (manifest.isDefault) return manifest;
  await lockDefaultOf(tx, manifest.hardwareType);
  await clearDefault(tx, manifest.hardwareType, manifest.id);
  const [row] = await tx
    .update(firmwareManifests)
    .set({ isDefault: true, revision: sql`${firmwareManifests.revision} + 1`, updatedAt: new Date() })
    .where(eq(firmwareManifests.id, manifest.id))
    .returning();
  return row!;
}

export async function deleteFirmwareManifest(tx: DbOrTx, id: string): Promise<void> {
  await tx.delete(firmwareManifests).where(eq(firmwareManifests.id, id));
}

// ---- Compliance ----

export const complianceStatuses = ['compliant', 'outdated', 'unknown', 'no_manifest'] as const;
export type ComplianceStatus = (typeof complianceStatuses)[number];

export interface ComplianceFilters {
  siteId?: string[];
  rackId?: string[];
  nodeType?: string[];
}

export interface ComponentCompliance {
  id: string;
  desired: string;
  installed: string | null;
  compliant: boolean;
}

export interface DeviceCompliance {
  deviceId: string;
  name: string;
  siteId: string;
  rackId: string | null;
  nodeType: string | null;
  manifestId: string | null;
  status: ComplianceStatus;
  components: ComponentCompliance[];
}

/** Conditions on `devices` for the compliance filters. */
function deviceConditions(f: ComplianceFilters): SQL[] {
  const c: SQL[] = [];
  if (f.siteId?.length) c.push(inArray(devices.siteId, f.siteId));
  if (f.rackId?.length) c.push(inArray(devices.rackId, f.rackId));
  if (f.nodeType?.length) c.push(inArray(devices.nodeType, f.nodeType));
  return c;
}

export interface CompliancePageQuery extends ComplianceFilters {
  limit: number;
  status?: ComplianceStatus[];
  /** Keyset position: name and id of the last device of the previous page. */
  after?: { name: string; id: string };
}

/**
 * A page of devices with their compliance, by (name, id). The status is device_compliance's, which triggers keep
 * (migration 0026): outdated when a component reports another version than its type's default manifest desires, else
 * unknown when one has reported none, else compliant. The per-component comparison is built for the page's devices.
 */
export async function listDeviceCompliance(db: DbOrTx, q: CompliancePageQuery): Promise<DeviceCompliance[]> {
  const c = deviceConditions(q);
  if (q.status?.length) c.push(inArray(deviceCompliance.status, q.status));
  // The same (name, id) order either way; with a status, device_compliance's copy of the name makes the page one
  // range of its (status, name, device_id) index, without one the devices indexes on (name, id) serve.
  const [name, id] = q.status?.length ? [deviceCompliance.name, deviceCompliance.deviceId] : [devices.name, devices.id];
  if (q.after) c.push(sql`(${name}, ${id}) > (${q.after.name}, ${q.after.id}::uuid)`);
  const res = await db.execute<{
    device_id: string;
    name: string;
    site_id: string;
    rack_id: string | null;
    node_type: string | null;
    manifest_id: string | null;
    status: ComplianceStatus;
    components: ComponentCompliance[];
  }>(sql`
    with page as (
      select devices.id as device_id, devices.name, devices.site_id, devices.rack_id, devices.node_type,
        device_compliance.manifest_id, device_compliance.status
      from device_compliance join devices on devices.id = device_compliance.device_id
      ${c.length ? sql`where ${and(...c)}` : sql``}
      order by ${name}, ${id}
      limit ${q.limit})
    select page.*, coalesce(cmp.components, '[]'::jsonb) as components
    from page left join lateral (
      select jsonb_agg(jsonb_build_object('id', w.component_id, 'desired', w.version, 'installed', f.version,
        'compliant', f.version is not distinct from w.version) order by w.component_id) as components
      from fleet_desired_components() w
        left join device_firmware f on f.device_id = page.device_id and f.component_id = w.component_id
      where w.manifest_id = page.manifest_id) cmp on true
    order by page.name, page.device_id`);
  return res.rows.map((r) => ({
    deviceId: r.device_id,
    name: r.name,
    siteId: r.site_id,
    rackId: r.rack_id,
    nodeType: r.node_type,
    manifestId: r.manifest_id,
    status: r.status,
    components: r.components,
  }));
}

/** Live device counts by compliance status: an aggregate over device_compliance (one row per live device). */
export async function complianceSummary(db: DbOrTx, f: ComplianceFilters): Promise<Record<ComplianceStatus, number>> {
  const c = deviceConditions(f);
  const counts = db
    .select({ status: deviceCompliance.status, n: sql<number>`count(*)::int` })
    .from(deviceCompliance)
    .$dynamic();
  // Unfiltered, the count needs no device row (Postgres does not drop an unused join).
  if (c.length) counts.innerJoin(devices, eq(devices.id, deviceCompliance.deviceId)).where(and(...c));
  const rows = await counts.groupBy(deviceCompliance.status);
  const out = Object.fromEntries(complianceStatuses.map((s) => [s, 0])) as Record<ComplianceStatus, number>;
  for (const r of rows) out[r.status as ComplianceStatus] = r.n;
  return out;
}

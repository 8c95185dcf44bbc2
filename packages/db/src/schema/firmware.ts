import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { CampaignPlan, CampaignPolicy, FirmwarePackageMetadata, ManifestStep } from '@fleet/domain';
import { createdAt, tsz, updatedAt } from './_columns.js';
import { devices, sites } from './inventory.js';
import { jobs } from './jobs.js';

/** Uploaded firmware packages; the bytes live in the blob store under their sha256. */
export const firmwarePackages = pgTable(
  'firmware_packages',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** sha256 of the whole file, lower-case hex: the blob store key and what satellites fetch by. */
    digest: text('digest').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    fileName: text('file_name').notNull(),
    /** pldm (a DSP0267 .fwpkg) or nvos (an NVOS switch image, metadata {format, buildId}). */
    format: text('format').notNull(),
    packageVersion: text('package_version').notNull(),
    metadata: jsonb('metadata').notNull().$type<FirmwarePackageMetadata>(),
    uploadedBy: text('uploaded_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('firmware_packages_digest_unique').on(t.digest)],
);

/**
 * Firmware manifests (RMS firmware objects): for one hardware type, which packages to push in
 * which order and which component versions a device runs afterwards. One default per type.
 */
export const firmwareManifests = pgTable(
  'firmware_manifests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    /** A node type (compute_gb200_nvidia, powershelf_gb200_liteon, ...). */
    hardwareType: text('hardware_type').notNull(),
    steps: jsonb('steps').notNull().$type<ManifestStep[]>(),
    isDefault: boolean('is_default').notNull().default(false),
    /** Bumped on every change; the ETag. */
    revision: integer('revision').notNull().default(1),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('firmware_manifests_name_unique').on(t.name),
    uniqueIndex('firmware_manifests_one_default_per_type')
      .on(t.hardwareType)
      .where(sql`${t.isDefault}`),
  ],
);

/** What each device last reported as installed, per firmware component. */
export const deviceFirmware = pgTable(
  'device_firmware',
  {
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    componentId: text('component_id').notNull(),
    version: text('version').notNull(),
    observedAt: tsz('observed_at').notNull().defaultNow(),
    /** The job whose workflow reported it. */
    jobId: uuid('job_id'),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.componentId] })],
);

/**
 * Each live device's compliance with its type's default manifest, kept by triggers (migration 0026) in the
 * transaction of the write that changes it, so the compliance summary and a status-filtered page read an index
 * instead of comparing every device's firmware per request. A deleted device has no row.
 */
export const deviceCompliance = pgTable(
  'device_compliance',
  {
    deviceId: uuid('device_id')
      .primaryKey()
      .references(() => devices.id, { onDelete: 'cascade' }),
    /** The default manifest it was compared with; null with status no_manifest. No FK: a trigger recomputes. */
    manifestId: uuid('manifest_id'),
    /** compliant, outdated, unknown or no_manifest. */
    status: text('status').notNull(),
    /** The device's name, copied so that a page of one status by name is one index range. */
    name: text('name').notNull(),
  },
  (t) => [index('device_compliance_status_name_id_idx').on(t.status, t.name, t.deviceId)],
);

/** A firmware rollout over one site's devices; its job (same id) carries state and progress. */
export const campaigns = pgTable(
  'campaigns',
  {
    id: uuid('id')
      .primaryKey()
      .references(() => jobs.id),
    name: text('name').notNull(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id),
    policy: jsonb('policy').notNull().$type<CampaignPolicy>(),
    plan: jsonb('plan').notNull().$type<CampaignPlan>(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('campaigns_site_id_idx').on(t.siteId), index('campaigns_created_at_id_idx').on(t.createdAt, t.id)],
);

/** Weekly maintenance windows (UTC) per site; a campaign starts device updates only inside one. */
export const maintenanceWindows = pgTable(
  'maintenance_windows',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    /** 0 = Sunday … 6 = Saturday. */
    weekdays: jsonb('weekdays').notNull().$type<number[]>(),
    startMinute: integer('start_minute').notNull(),
    durationMinutes: integer('duration_minutes').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('maintenance_windows_site_id_idx').on(t.siteId)],
);

export type FirmwarePackage = typeof firmwarePackages.$inferSelect;
export type FirmwareManifest = typeof firmwareManifests.$inferSelect;
export type DeviceFirmware = typeof deviceFirmware.$inferSelect;
export type DeviceComplianceRow = typeof deviceCompliance.$inferSelect;
export type Campaign = typeof campaigns.$inferSelect;
export type MaintenanceWindow = typeof maintenanceWindows.$inferSelect;

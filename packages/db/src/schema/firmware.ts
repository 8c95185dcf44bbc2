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
export type Campaign = typeof campaigns.$inferSelect;
export type MaintenanceWindow = typeof maintenanceWindows.$inferSelect;

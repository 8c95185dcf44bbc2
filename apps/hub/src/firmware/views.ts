import { z } from 'zod';
import { complianceStatuses, type DeviceCompliance, type FirmwareManifest, type FirmwarePackage } from '@fleet/db';
import { isNvosImage, packageFormats, type PackageFormat, type PldmPackageMetadata } from '@fleet/domain';
import { pageOf, timestamp, uuid } from '../views.js';

// Response schemas of the firmware routes; each view returns its schema's type.

const packageFields = {
  id: uuid,
  digest: z.string(),
  size_bytes: z.number().int(),
  file_name: z.string(),
  format: z.enum(packageFormats),
  package_version: z.string(),
  uploaded_by: z.string(),
  created_at: timestamp,
  links: z.object({ self: z.string(), blob: z.string() }),
};
export const PackageView = z
  .union([
    /** An NVOS image: the build its file name names. */
    z.object({ ...packageFields, build_id: z.string() }),
    /** A PLDM package: its parsed header. */
    z.object({
      ...packageFields,
      header: z.object({ revision: z.string(), uuid: z.string(), release_date_time: timestamp.nullable() }),
      devices: z.array(
        z.object({
          descriptors: z.array(z.object({ type: z.number().int(), data: z.string() })),
          applicable_components: z.array(z.number().int()),
          image_set_version: z.string(),
        }),
      ),
      components: z.array(
        z.object({
          index: z.number().int(),
          identifier: z.number().int(),
          classification: z.number().int(),
          comparison_stamp: z.number().int(),
          version: z.string(),
          offset: z.number().int(),
          size: z.number().int(),
          sha256: z.string(),
        }),
      ),
    }),
  ])
  .meta({ id: 'FirmwarePackage' });
export const PackagePage = pageOf(PackageView, 'FirmwarePackagePage');

export const ManifestView = z
  .object({
    id: uuid,
    name: z.string(),
    hardware_type: z.string(),
    default: z.boolean(),
    revision: z.number().int(),
    steps: z.array(
      z.object({
        name: z.string(),
        package_id: uuid,
        targets: z.array(z.string()),
        components: z.array(z.object({ id: z.string(), version: z.string() })),
      }),
    ),
    created_by: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'FirmwareManifest' });
export const ManifestPage = pageOf(ManifestView, 'FirmwareManifestPage');

export const ComplianceView = z
  .object({
    device_id: uuid,
    name: z.string(),
    site_id: z.string(),
    rack_id: uuid.nullable(),
    node_type: z.string().nullable(),
    manifest_id: uuid.nullable(),
    status: z.enum(complianceStatuses),
    components: z.array(
      z.object({ id: z.string(), desired: z.string(), installed: z.string().nullable(), compliant: z.boolean() }),
    ),
  })
  .meta({ id: 'DeviceCompliance' });
export const CompliancePage = pageOf(ComplianceView, 'DeviceCompliancePage');
export const ComplianceSummaryView = z.object({
  total: z.number().int(),
  by_status: z.record(z.enum(complianceStatuses), z.number().int()),
});

export function packageView(p: FirmwarePackage): z.infer<typeof PackageView> {
  const m = p.metadata;
  return {
    id: p.id,
    digest: p.digest,
    size_bytes: p.sizeBytes,
    file_name: p.fileName,
    format: p.format as PackageFormat,
    package_version: p.packageVersion,
    ...(isNvosImage(m) ? { build_id: m.buildId } : pldmView(m)),
    uploaded_by: p.uploadedBy,
    created_at: p.createdAt.toISOString(),
    links: { self: `/v1/firmware/packages/${p.id}`, blob: `/v1/firmware/blobs/${p.digest}` },
  };
}

/** A PLDM package's parsed header: its device records and component images. */
function pldmView(m: PldmPackageMetadata) {
  return {
    header: { revision: m.headerRevision, uuid: m.headerUuid, release_date_time: m.releaseDateTime },
    devices: m.devices.map((d) => ({
      descriptors: d.descriptors,
      applicable_components: d.applicableComponents,
      image_set_version: d.imageSetVersion,
    })),
    components: m.components.map((c) => ({
      index: c.index,
      identifier: c.identifier,
      classification: c.classification,
      comparison_stamp: c.comparisonStamp,
      version: c.version,
      offset: c.offset,
      size: c.size,
      sha256: c.sha256,
    })),
  };
}

export function manifestView(m: FirmwareManifest): z.infer<typeof ManifestView> {
  return {
    id: m.id,
    name: m.name,
    hardware_type: m.hardwareType,
    default: m.isDefault,
    revision: m.revision,
    steps: m.steps.map((s) => ({
      name: s.name,
      package_id: s.packageId,
      targets: s.targets,
      components: s.components,
    })),
    created_by: m.createdBy,
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  };
}

export function complianceView(c: DeviceCompliance): z.infer<typeof ComplianceView> {
  return {
    device_id: c.deviceId,
    name: c.name,
    site_id: c.siteId,
    rack_id: c.rackId,
    node_type: c.nodeType,
    manifest_id: c.manifestId,
    status: c.status,
    components: c.components,
  };
}

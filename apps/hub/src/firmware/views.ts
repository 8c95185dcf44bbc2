import type { DeviceCompliance, FirmwareManifest, FirmwarePackage } from '@fleet/db';
import { isNvosImage, type PldmPackageMetadata } from '@fleet/domain';

export function packageView(p: FirmwarePackage) {
  const m = p.metadata;
  return {
    id: p.id,
    digest: p.digest,
    size_bytes: p.sizeBytes,
    file_name: p.fileName,
    format: p.format,
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

export function manifestView(m: FirmwareManifest) {
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

export function complianceView(c: DeviceCompliance) {
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

import type { FwpkgInspection, Timestamp104 } from '@fleet/fwpkg';
import type { PldmPackageMetadata } from '@fleet/domain';

/** PackageReleaseDateTime as RFC 3339 UTC; null when the package carries none (all zeros) or an impossible date. */
function releaseDateTime(t: Timestamp104): string | null {
  if (
    t.year === 0 ||
    t.month < 1 ||
    t.month > 12 ||
    t.day < 1 ||
    t.day > 31 ||
    t.hour > 23 ||
    t.minute > 59 ||
    t.second > 59
  )
    return null;
  const ms =
    Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second, Math.floor(t.microsecond / 1000)) -
    t.utcOffset * 60_000;
  return new Date(ms).toISOString();
}

/** What the catalog keeps of an inspected package: its header, minus the raw bytes, and each image's sha256. */
export function packageMetadata({ header, componentSha256 }: FwpkgInspection): PldmPackageMetadata {
  return {
    headerRevision: header.revision,
    headerUuid: header.identifier,
    releaseDateTime: releaseDateTime(header.releaseDateTime),
    devices: header.devices.map((d) => ({
      descriptors: d.descriptors.map((x) => ({ type: x.type, data: x.data })),
      applicableComponents: d.applicableComponents,
      imageSetVersion: d.imageSetVersion,
    })),
    components: header.components.map((c, index) => ({
      index,
      identifier: c.identifier,
      classification: c.classification,
      comparisonStamp: c.comparisonStamp,
      version: c.version,
      offset: c.locationOffset,
      size: c.size,
      sha256: componentSha256[index]!,
    })),
  };
}

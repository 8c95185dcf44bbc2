import { crc32 } from './crc32.js';
import { readDescriptor } from './descriptors.js';
import { FwpkgError, hex32 } from './errors.js';
import { Reader } from './reader.js';
import { REVISIONS, uuidText, type RevisionInfo } from './revisions.js';
import { decodeTimestamp104, TIMESTAMP104_SIZE } from './timestamp.js';
import type { ComponentImageInfo, DownstreamDeviceRecord, FirmwareDeviceRecord, FwpkgHeader } from './types.js';

/** PackageHeaderIdentifier, PackageHeaderFormatRevision and PackageHeaderSize: enough to know the header's size. */
export const HEADER_SIZE_KNOWN_AT = 19;
/** Bytes from PackageHeaderIdentifier through PackageVersionStringLength. */
const FIXED_HEADER = 36;
/** Offsets of ComponentLocationOffset and ComponentSize inside a ComponentImageInformation entry. */
export const COMPONENT_LOCATION_OFFSET = 12;
export const COMPONENT_SIZE = 16;
/** Bytes of a device record before ApplicableComponents (1.3 adds ReferenceManifestLength). */
const recordFixedSize = (rev: RevisionInfo) => (rev.referenceManifest ? 15 : 11);

const HEADER_LIMIT = 'the package header (PackageHeaderSize)';
const RECORD_LIMIT = 'the record (RecordLength)';

/**
 * Parses the package header from a prefix of the package (the images need not be there) and
 * checks PackageHeaderChecksum and every length, count and index inside the header. Throws
 * FwpkgError; `truncated` carries `needBytes`, the prefix length a retry needs.
 */
export function parseFwpkgHeader(buf: Uint8Array): FwpkgHeader {
  const rev = identify(buf);
  const headerSize = buf[17]! | (buf[18]! << 8);
  const checksumBytes = rev.payloadChecksum ? 8 : 4;
  const smallest = FIXED_HEADER + 1 + (rev.downstreamDevices ? 1 : 0) + 2 + checksumBytes;
  if (headerSize < smallest) {
    throw new FwpkgError(
      'bad_field',
      'PackageHeaderSize',
      17,
      `${headerSize} is smaller than the smallest ${rev.revision} header (${smallest} bytes)`,
    );
  }
  if (buf.length < headerSize) {
    throw new FwpkgError(
      'truncated',
      'PackageHeaderSize',
      buf.length,
      `the header is ${headerSize} bytes but only ${buf.length} are here`,
      headerSize,
    );
  }

  // Checked before the structure: a corrupted byte is reported as what it is, not as whatever
  // field it happens to land in.
  const areasEnd = headerSize - checksumBytes;
  const checksums = new Reader(buf, areasEnd, headerSize, HEADER_LIMIT);
  const headerChecksum = checksums.u32('PackageHeaderChecksum');
  const computed = crc32(buf.subarray(0, areasEnd));
  if (computed !== headerChecksum) {
    throw new FwpkgError(
      'checksum_mismatch',
      'PackageHeaderChecksum',
      areasEnd,
      `stored ${hex32(headerChecksum)}, computed ${hex32(computed)}`,
    );
  }
  const payloadChecksum = rev.payloadChecksum ? checksums.u32('PackagePayloadChecksum') : undefined;

  const r = new Reader(buf, HEADER_SIZE_KNOWN_AT, areasEnd, HEADER_LIMIT);
  const releaseDateTime = decodeTimestamp104(r.bytes(TIMESTAMP104_SIZE, 'PackageReleaseDateTime'));
  const bitLengthAt = r.offset;
  const componentBitmapBitLength = r.u16('ComponentBitmapBitLength');
  if (componentBitmapBitLength % 8 !== 0) {
    throw new FwpkgError(
      'bad_field',
      'ComponentBitmapBitLength',
      bitLengthAt,
      `${componentBitmapBitLength} is not a multiple of 8`,
    );
  }
  const packageVersionType = r.stringType('PackageVersionStringType');
  const packageVersion = r.string(packageVersionType, r.u8('PackageVersionStringLength'), 'PackageVersionString');

  const devices = times(r.u8('DeviceIDRecordCount'), () => readDeviceRecord(r, rev, componentBitmapBitLength));
  const downstreamDevices = rev.downstreamDevices
    ? times(r.u8('DownstreamDeviceIDRecordCount'), () => readDownstreamRecord(r, rev, componentBitmapBitLength))
    : [];
  const components = times(r.u16('ComponentImageCount'), () => readComponent(r, rev, headerSize));
  if (r.remaining !== 0) {
    throw new FwpkgError(
      'bad_field',
      'PackageHeaderSize',
      17,
      `${headerSize} bytes declared, but the header's fields end at byte ${r.offset + checksumBytes}`,
    );
  }

  if (componentBitmapBitLength < components.length) {
    throw new FwpkgError(
      'bad_field',
      'ComponentBitmapBitLength',
      bitLengthAt,
      `${componentBitmapBitLength} bits cannot cover ${components.length} components`,
    );
  }
  for (const record of [...devices, ...downstreamDevices]) {
    const missing = record.applicableComponents.find((i) => i >= components.length);
    if (missing !== undefined) {
      throw new FwpkgError(
        'bad_field',
        'ApplicableComponents',
        record.recordOffset + recordFixedSize(rev),
        `refers to component ${missing}, the package has ${components.length}`,
      );
    }
  }

  return {
    revision: rev.revision,
    identifier: rev.identifier,
    formatRevision: rev.formatRevision,
    headerSize,
    releaseDateTime,
    componentBitmapBitLength,
    packageVersion,
    packageVersionType,
    devices,
    downstreamDevices,
    components,
    headerChecksum,
    ...(payloadChecksum !== undefined ? { payloadChecksum } : {}),
  };
}

function identify(buf: Uint8Array): RevisionInfo {
  const truncated = (field: string) =>
    new FwpkgError(
      'truncated',
      field,
      buf.length,
      `the package ends here; its first ${HEADER_SIZE_KNOWN_AT} bytes give the header size`,
      HEADER_SIZE_KNOWN_AT,
    );
  if (buf.length < 16) throw truncated('PackageHeaderIdentifier');
  const identifier = uuidText(buf.subarray(0, 16));
  const rev = Object.values(REVISIONS).find((r) => r.identifier === identifier);
  if (!rev)
    throw new FwpkgError(
      'unsupported_revision',
      'PackageHeaderIdentifier',
      0,
      `${identifier} is not a DSP0267 1.0, 1.1, 1.2 or 1.3 package`,
    );
  if (buf.length < HEADER_SIZE_KNOWN_AT)
    throw truncated(buf.length === 16 ? 'PackageHeaderFormatRevision' : 'PackageHeaderSize');
  if (buf[16] !== rev.formatRevision) {
    throw new FwpkgError(
      'bad_field',
      'PackageHeaderFormatRevision',
      16,
      `${buf[16]} does not match the ${rev.revision} identifier (${rev.formatRevision})`,
    );
  }
  return rev;
}

/** Field names of the two record kinds, which share a layout. */
const DEVICE = {
  flags: 'DeviceUpdateOptionFlags',
  version: 'ComponentImageSetVersionString',
  packageData: 'FirmwareDevicePackageData',
  manifest: 'ReferenceManifest',
} as const;
const DOWNSTREAM = {
  flags: 'DownstreamDeviceUpdateOptionFlags',
  version: 'SelfContainedActivationMinVersionString',
  packageData: 'DownstreamDevicePackageData',
  manifest: 'DownstreamDeviceReferenceManifest',
} as const;

type RecordCommon = Omit<FirmwareDeviceRecord, 'imageSetVersion' | 'imageSetVersionType'>;

/** A FirmwareDeviceIDRecord or DownstreamDeviceIDRecord; RecordLength bounds every field in it. */
function readRecord(
  r: Reader,
  rev: RevisionInfo,
  bitLength: number,
  names: typeof DEVICE | typeof DOWNSTREAM,
): { common: RecordCommon; version: string; versionType: number; stamp: number | undefined } {
  const recordOffset = r.offset;
  const fixed = recordFixedSize(rev);
  const length = r.u16('RecordLength');
  if (length < fixed)
    throw new FwpkgError(
      'bad_field',
      'RecordLength',
      recordOffset,
      `${length} is shorter than the record's fixed fields (${fixed} bytes)`,
    );
  // The window spans the whole record, so a record running past the header is reported at its start.
  r.offset = recordOffset;
  const rec = r.window(length, 'RecordLength', RECORD_LIMIT);
  rec.offset += 2;
  const descriptorCount = rec.u8('DescriptorCount');
  const updateOptionFlags = rec.u32(names.flags);
  const versionType = rec.stringType(`${names.version}Type`);
  const versionLength = rec.u8(`${names.version}Length`);
  const packageDataLength = rec.u16(`${names.packageData}Length`);
  const manifestLength = rev.referenceManifest ? rec.u32(`${names.manifest}Length`) : 0;
  const applicableComponents = bitmap(rec.bytes(bitLength / 8, 'ApplicableComponents'));
  const version = rec.string(versionType, versionLength, names.version);
  const stamp =
    names === DOWNSTREAM && updateOptionFlags & 1
      ? rec.u32('SelfContainedActivationMinVersionComparisonStamp')
      : undefined;
  const descriptors = times(descriptorCount, () => readDescriptor(rec));
  const packageData = rec.hex(packageDataLength, names.packageData);
  const referenceManifest = rev.referenceManifest ? rec.hex(manifestLength, `${names.manifest}Data`) : undefined;
  if (rec.remaining !== 0)
    throw new FwpkgError(
      'bad_field',
      'RecordLength',
      recordOffset,
      `${length} bytes declared, but the record's fields end ${rec.remaining} bytes earlier`,
    );
  const common = {
    recordOffset,
    updateOptionFlags,
    applicableComponents,
    descriptors,
    packageData,
    ...(referenceManifest !== undefined ? { referenceManifest } : {}),
  };
  return { common, version, versionType, stamp };
}

function readDeviceRecord(r: Reader, rev: RevisionInfo, bitLength: number): FirmwareDeviceRecord {
  const { common, version, versionType } = readRecord(r, rev, bitLength, DEVICE);
  return { ...common, imageSetVersion: version, imageSetVersionType: versionType };
}

function readDownstreamRecord(r: Reader, rev: RevisionInfo, bitLength: number): DownstreamDeviceRecord {
  const { common, version, versionType, stamp } = readRecord(r, rev, bitLength, DOWNSTREAM);
  return {
    ...common,
    selfContainedActivationMinVersion: version,
    selfContainedActivationMinVersionType: versionType,
    ...(stamp !== undefined ? { selfContainedActivationMinComparisonStamp: stamp } : {}),
  };
}

function readComponent(r: Reader, rev: RevisionInfo, headerSize: number): ComponentImageInfo {
  const recordOffset = r.offset;
  const classification = r.u16('ComponentClassification');
  const identifier = r.u16('ComponentIdentifier');
  const comparisonStamp = r.u32('ComponentComparisonStamp');
  const options = r.u16('ComponentOptions');
  const requestedActivationMethod = r.u16('RequestedComponentActivationMethod');
  const locationOffset = r.u32('ComponentLocationOffset');
  const size = r.u32('ComponentSize');
  const versionType = r.stringType('ComponentVersionStringType');
  const version = r.string(versionType, r.u8('ComponentVersionStringLength'), 'ComponentVersionString');
  const opaqueData = rev.componentOpaqueData
    ? r.hex(r.u32('ComponentOpaqueDataLength'), 'ComponentOpaqueData')
    : undefined;
  if (locationOffset < headerSize) {
    throw new FwpkgError(
      'out_of_bounds',
      'ComponentLocationOffset',
      recordOffset + COMPONENT_LOCATION_OFFSET,
      `${locationOffset} lies inside the ${headerSize}-byte package header`,
    );
  }
  return {
    recordOffset,
    classification,
    identifier,
    comparisonStamp,
    options,
    requestedActivationMethod,
    locationOffset,
    size,
    version,
    versionType,
    ...(opaqueData !== undefined ? { opaqueData } : {}),
  };
}

/** Bit i set (least significant bit of byte 0 first) means component i applies. */
function bitmap(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes.length * 8; i++) if ((bytes[i >> 3]! >> (i & 7)) & 1) out.push(i);
  return out;
}

function times<T>(n: number, read: (i: number) => T): T[] {
  return Array.from({ length: n }, (_, i) => read(i));
}

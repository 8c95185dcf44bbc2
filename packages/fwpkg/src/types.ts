import type { Descriptor } from './descriptors.js';
import type { FwpkgRevision } from './revisions.js';
import type { Timestamp104 } from './timestamp.js';

/** A parsed PLDM firmware update package header (DSP0267 1.0–1.3). Binary fields are lower-case hex. */
export interface FwpkgHeader {
  revision: FwpkgRevision;
  /** PackageHeaderIdentifier, canonical UUID text. */
  identifier: string;
  /** PackageHeaderFormatRevision. */
  formatRevision: number;
  /** PackageHeaderSize: the images start at or after this byte. */
  headerSize: number;
  releaseDateTime: Timestamp104;
  componentBitmapBitLength: number;
  packageVersion: string;
  packageVersionType: number;
  devices: FirmwareDeviceRecord[];
  /** 1.1+; empty for 1.0. */
  downstreamDevices: DownstreamDeviceRecord[];
  components: ComponentImageInfo[];
  headerChecksum: number;
  /** 1.3+: CRC-32 of every byte after the header. */
  payloadChecksum?: number;
}

export interface FirmwareDeviceRecord {
  /** Byte offset of the record in the package. */
  recordOffset: number;
  /** DeviceUpdateOptionFlags (bitfield32). */
  updateOptionFlags: number;
  /** ComponentImageSetVersionString and its string type. */
  imageSetVersion: string;
  imageSetVersionType: number;
  /** ApplicableComponents: indexes into `components`. */
  applicableComponents: number[];
  descriptors: Descriptor[];
  /** FirmwareDevicePackageData. */
  packageData: string;
  /** 1.3+: ReferenceManifestData. */
  referenceManifest?: string;
}

export interface DownstreamDeviceRecord {
  recordOffset: number;
  /** DownstreamDeviceUpdateOptionFlags; bit 0: self-contained activation with a minimum version. */
  updateOptionFlags: number;
  selfContainedActivationMinVersion: string;
  selfContainedActivationMinVersionType: number;
  /** Present only when bit 0 of the option flags is set. */
  selfContainedActivationMinComparisonStamp?: number;
  applicableComponents: number[];
  descriptors: Descriptor[];
  /** DownstreamDevicePackageData. */
  packageData: string;
  /** 1.3+: DownstreamDeviceReferenceManifestData. */
  referenceManifest?: string;
}

export interface ComponentImageInfo {
  /** Byte offset of this ComponentImageInformation entry in the package. */
  recordOffset: number;
  classification: number;
  identifier: number;
  comparisonStamp: number;
  /** ComponentOptions (bitfield16); bit 1: use the comparison stamp. */
  options: number;
  /** RequestedComponentActivationMethod (bitfield16). */
  requestedActivationMethod: number;
  /** ComponentLocationOffset: byte offset of the image in the package. */
  locationOffset: number;
  /** ComponentSize in bytes. */
  size: number;
  version: string;
  versionType: number;
  /** 1.2+: ComponentOpaqueData. */
  opaqueData?: string;
}

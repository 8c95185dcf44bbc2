/** DSP0267 releases whose package format this library reads and writes. */
export type FwpkgRevision = '1.0' | '1.1' | '1.2' | '1.3';

export interface RevisionInfo {
  revision: FwpkgRevision;
  /** PackageHeaderIdentifier, as a canonical lower-case UUID. */
  identifier: string;
  /** PackageHeaderFormatRevision. */
  formatRevision: number;
  /** 1.1+: the DownstreamDeviceIdentificationArea follows the firmware device records. */
  downstreamDevices: boolean;
  /** 1.2+: each ComponentImageInformation ends with ComponentOpaqueDataLength and data. */
  componentOpaqueData: boolean;
  /** 1.3+: device records carry ReferenceManifestLength and data. */
  referenceManifest: boolean;
  /** 1.3+: PackagePayloadChecksum follows PackageHeaderChecksum, inside the header. */
  payloadChecksum: boolean;
}

const revision = (r: FwpkgRevision, identifier: string, formatRevision: number): RevisionInfo => ({
  revision: r,
  identifier,
  formatRevision,
  downstreamDevices: formatRevision >= 2,
  componentOpaqueData: formatRevision >= 3,
  referenceManifest: formatRevision >= 4,
  payloadChecksum: formatRevision >= 4,
});

// Identifiers as DSP0267 and openbmc/libpldm define them. 1.2's is 3119ce2f-…; the 31429ce7-…
// that circulates in notes matches no specification or implementation.
export const REVISIONS: Readonly<Record<FwpkgRevision, RevisionInfo>> = {
  '1.0': revision('1.0', 'f018878c-cb7d-4943-9800-a02f059aca02', 1),
  '1.1': revision('1.1', '1244d264-8d7d-4718-a030-fc8a56587d5a', 2),
  '1.2': revision('1.2', '3119ce2f-e80a-4a99-af6d-46f8b121f6bf', 3),
  '1.3': revision('1.3', '7b291c99-6db6-4208-801b-02026e463c78', 4),
};

/** Canonical UUID text of 16 bytes, in the order they appear in the package. */
export function uuidText(bytes: Uint8Array): string {
  const h = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

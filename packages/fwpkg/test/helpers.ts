import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  crc32,
  DESCRIPTOR_UUID,
  DESCRIPTOR_VENDOR_DEFINED,
  REVISIONS,
  type FwpkgHeader,
  type FwpkgRevision,
  type FwpkgSpec,
} from '../src/index.js';

// The team's shared folder sits beside the repository (../shared), in CI as on a desk.
export const vectors = fileURLToPath(new URL('../../../../shared/peers/pldm-fwpkg-vectors/', import.meta.url));

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Option and flag bits as the openbmc creator metadata lists them, as a bitfield. */
export const fromBits = (list: number[]) => list.reduce((n, i) => n | (1 << i), 0) >>> 0;

/** The bytes as a stream of `size`-byte chunks (the last one shorter). */
export async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Rewrites PackageHeaderChecksum after a test edited the header, so the edit itself is what gets reported. */
export function reseal(pkg: Buffer): Buffer {
  const formatRevision = pkg[16];
  const headerSize = pkg.readUInt16LE(17);
  const checksumAt = headerSize - (formatRevision === REVISIONS['1.3'].formatRevision ? 8 : 4);
  pkg.writeUInt32LE(crc32(pkg.subarray(0, checksumAt)), checksumAt);
  return pkg;
}

/** The header without its layout (offsets, sizes, checksums): what a package spec determines. */
export function logical(h: FwpkgHeader) {
  const {
    headerSize: _size,
    headerChecksum: _crc,
    payloadChecksum: _payload,
    devices,
    downstreamDevices,
    components,
    ...rest
  } = h;
  return {
    ...rest,
    devices: devices.map(({ recordOffset: _at, ...d }) => d),
    downstreamDevices: downstreamDevices.map(({ recordOffset: _at, ...d }) => d),
    components: components.map(({ recordOffset: _at, locationOffset: _loc, size: _len, ...c }) => c),
  };
}

export const TRAY = '1244d2648d7d4718a030fc8a56587d5b';
export const SWITCH = '00112233445566778899aabbccddeeff';
export const firmware = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 31) & 0xff));

/** Every optional part each revision can carry: descriptors of several kinds, UTF-8, an empty image. */
export function sampleSpec(revision: FwpkgRevision): FwpkgSpec {
  const v11 = revision !== '1.0';
  const v12 = revision === '1.2' || revision === '1.3';
  const v13 = revision === '1.3';
  return {
    revision,
    packageVersion: 'GB200Nvl-25.09-1',
    releaseDateTime: new Date('2025-09-14T05:06:07.089Z'),
    devices: [
      {
        descriptors: [
          { type: DESCRIPTOR_UUID, data: TRAY },
          { type: 0x0001, data: '47160000' },
          { type: DESCRIPTOR_VENDOR_DEFINED, title: 'NVIDIA', data: 'cafe' },
        ],
        applicableComponents: [0, 2],
        imageSetVersion: 'tray-set-1',
        updateOptionFlags: 1,
        packageData: 'a1b2c3',
        ...(v13 ? { referenceManifest: '0102030405' } : {}),
      },
      {
        descriptors: [
          { type: 0x0000, data: 'de10' },
          { type: 0x0100, data: '2342' },
        ],
        applicableComponents: [1],
        imageSetVersion: 'ünïcode-set',
      },
    ],
    ...(v11
      ? {
          downstreamDevices: [
            {
              descriptors: [{ type: DESCRIPTOR_UUID, data: SWITCH }],
              applicableComponents: [1],
              selfContainedActivationMin: { version: '1.2.3', comparisonStamp: 0x10203 },
              ...(v13 ? { referenceManifest: 'ff' } : {}),
            },
            {
              descriptors: [{ type: DESCRIPTOR_UUID, data: TRAY }],
              applicableComponents: [0, 1, 2],
              packageData: '00',
            },
          ],
        }
      : {}),
    components: [
      {
        classification: 0x000a,
        identifier: 0x10,
        comparisonStamp: 0x01020304,
        activationMethod: 0b1100,
        version: 'BMC 25.09',
        image: { data: firmware },
        ...(v12 ? { opaqueData: 'abcd' } : {}),
      },
      { classification: 0x000a, identifier: 0x20, version: 'GPU 97.00', image: { size: 5000, fill: 0x5a } },
      { classification: 0x0001, identifier: 0x30, options: 1, version: 'empty', image: { size: 0 } },
    ],
  };
}

import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from './crc32.js';
import { encodeDescriptor, type DescriptorSpec } from './descriptors.js';
import { REVISIONS, type FwpkgRevision, type RevisionInfo } from './revisions.js';
import { bytesOf, encodeString } from './strings.js';
import { encodeTimestamp104, NO_TIMESTAMP, type Timestamp104 } from './timestamp.js';

/** A component image: real bytes, or `size` bytes of `fill` (default 0) generated while writing. */
export type ImageSpec = { data: Uint8Array } | { size: number; fill?: number };

export interface FwpkgSpec {
  revision: FwpkgRevision;
  packageVersion: string;
  /** Default: all zeros, so that a build is reproducible byte for byte. */
  releaseDateTime?: Date | Timestamp104;
  /** Default: the component count rounded up to a multiple of 8, at least 8. */
  componentBitmapBitLength?: number;
  devices: DeviceSpec[];
  /** 1.1+. */
  downstreamDevices?: DownstreamDeviceSpec[];
  /** The images follow the header in this order. */
  components: ComponentSpec[];
}

export interface DeviceSpec {
  descriptors: DescriptorSpec[];
  /** Indexes into `components`. */
  applicableComponents: number[];
  imageSetVersion: string;
  updateOptionFlags?: number;
  packageData?: string | Uint8Array;
  /** 1.3+. */
  referenceManifest?: string | Uint8Array;
}

export interface DownstreamDeviceSpec {
  descriptors: DescriptorSpec[];
  applicableComponents: number[];
  updateOptionFlags?: number;
  /** Sets option flag bit 0 and writes SelfContainedActivationMinVersionString and its stamp. */
  selfContainedActivationMin?: { version: string; comparisonStamp: number };
  packageData?: string | Uint8Array;
  /** 1.3+. */
  referenceManifest?: string | Uint8Array;
}

export interface ComponentSpec {
  classification: number;
  identifier: number;
  /** Default 0xFFFFFFFF, DSP0267's "no stamp". */
  comparisonStamp?: number;
  /** ComponentOptions bitfield; default: bit 1 (use the comparison stamp) when a stamp is given. */
  options?: number;
  /** RequestedComponentActivationMethod bitfield; default 0. */
  activationMethod?: number;
  version: string;
  /** 1.2+. */
  opaqueData?: string | Uint8Array;
  image: ImageSpec;
}

const NO_STAMP = 0xffffffff;
const CHUNK = 1024 * 1024;

/** A whole package in memory: for tests and small simulator packages. */
export function buildFwpkg(spec: FwpkgSpec): Buffer {
  return Buffer.concat([...packageChunks(spec)]);
}

/**
 * Streams a package to `path`, generating fill images chunk by chunk, so a multi-GB package
 * never sits in memory. 1.3 packages take a first pass over the images for the payload checksum.
 */
export async function writeFwpkgFile(path: string, spec: FwpkgSpec): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  const hashed = function* () {
    for (const chunk of packageChunks(spec)) {
      hash.update(chunk);
      size += chunk.length;
      yield chunk;
    }
  };
  await pipeline(Readable.from(hashed()), createWriteStream(path));
  return { size, sha256: hash.digest('hex') };
}

function* packageChunks(spec: FwpkgSpec): Generator<Uint8Array> {
  yield encodeHeader(spec);
  for (const c of spec.components) yield* imageChunks(c.image);
}

function* imageChunks(image: ImageSpec): Generator<Uint8Array> {
  if ('data' in image) {
    yield image.data;
    return;
  }
  // One chunk reused for the whole image: consumers copy or write it before asking for the next.
  const chunk = Buffer.alloc(Math.min(image.size, CHUNK), image.fill ?? 0);
  for (let left = image.size; left > 0; left -= chunk.length)
    yield left >= chunk.length ? chunk : chunk.subarray(0, left);
}

const imageSize = (image: ImageSpec) => ('data' in image ? image.data.length : image.size);

function encodeHeader(spec: FwpkgSpec): Buffer {
  const rev = REVISIONS[spec.revision];
  const count = spec.components.length;
  const bitLength = spec.componentBitmapBitLength ?? Math.max(8, Math.ceil(count / 8) * 8);
  if (bitLength % 8 !== 0 || bitLength < count)
    throw new RangeError(`ComponentBitmapBitLength ${bitLength} cannot cover ${count} components`);
  if (spec.downstreamDevices?.length && !rev.downstreamDevices)
    throw new RangeError(`DSP0267 ${rev.revision} has no downstream device records`);

  const version = encodeString(spec.packageVersion);
  const fixed = new Bytes()
    .put(Buffer.from(rev.identifier.replaceAll('-', ''), 'hex'))
    .u8(rev.formatRevision)
    .u16(0) // PackageHeaderSize, set below
    .put(encodeTimestamp104(spec.releaseDateTime ?? NO_TIMESTAMP))
    .u16(bitLength)
    .u8(version.type)
    .u8(version.bytes.length)
    .put(version.bytes);
  const layout: Layout = { rev, bitLength, count };
  const areas = new Bytes().u8(spec.devices.length);
  for (const d of spec.devices) areas.put(deviceRecord(layout, d));
  if (rev.downstreamDevices) {
    areas.u8(spec.downstreamDevices?.length ?? 0);
    for (const d of spec.downstreamDevices ?? []) areas.put(downstreamRecord(layout, d));
  }
  areas.u16(count);
  const entries = spec.components.map((c) => componentEntry(rev, c));

  const checksumBytes = rev.payloadChecksum ? 8 : 4;
  const headerSize = fixed.length + areas.length + entries.reduce((n, e) => n + e.length, 0) + checksumBytes;
  if (headerSize > 0xffff)
    throw new RangeError(`the header would be ${headerSize} bytes; PackageHeaderSize stops at 65535`);
  let location = headerSize;
  spec.components.forEach((c, i) => {
    const size = imageSize(c.image);
    if (location > 0xffffffff)
      throw new RangeError(`component ${i} would start beyond ComponentLocationOffset's 32 bits`);
    entries[i]!.writeUInt32LE(location, 12);
    entries[i]!.writeUInt32LE(size, 16);
    location += size;
  });

  const body = Buffer.concat([fixed.toBuffer(), areas.toBuffer(), ...entries]);
  body.writeUInt16LE(headerSize, 17);
  const checksums = new Bytes().u32(crc32(body));
  if (rev.payloadChecksum) checksums.u32(payloadChecksum(spec));
  return Buffer.concat([body, checksums.toBuffer()]);
}

function payloadChecksum(spec: FwpkgSpec): number {
  let crc = 0;
  for (const c of spec.components) for (const chunk of imageChunks(c.image)) crc = crc32(chunk, crc);
  return crc;
}

/** What every record's encoding depends on. */
interface Layout {
  rev: RevisionInfo;
  bitLength: number;
  /** Components in the package. */
  count: number;
}

function deviceRecord(layout: Layout, d: DeviceSpec): Buffer {
  return record(layout, d, d.updateOptionFlags ?? 0, encodeString(d.imageSetVersion));
}

function downstreamRecord(layout: Layout, d: DownstreamDeviceSpec): Buffer {
  const min = d.selfContainedActivationMin;
  // Without a minimum version the string is empty, of type Unknown, as openbmc's creator writes it.
  if (!min) return record(layout, d, d.updateOptionFlags ?? 0, { type: 0, bytes: Buffer.alloc(0) });
  return record(layout, d, (d.updateOptionFlags ?? 0) | 1, encodeString(min.version), min.comparisonStamp);
}

/** The layout both record kinds share; only a downstream record with option flag bit 0 has `stamp`. */
function record(
  { rev, bitLength, count }: Layout,
  d: DeviceSpec | DownstreamDeviceSpec,
  flags: number,
  version: { type: number; bytes: Buffer },
  stamp?: number,
): Buffer {
  if (d.referenceManifest !== undefined && !rev.referenceManifest)
    throw new RangeError(`DSP0267 ${rev.revision} records have no reference manifest`);
  const packageData = bytesOf(d.packageData ?? '');
  const manifest = bytesOf(d.referenceManifest ?? '');
  const bitmap = Buffer.alloc(bitLength / 8);
  for (const i of d.applicableComponents) {
    if (!Number.isInteger(i) || i < 0 || i >= count)
      throw new RangeError(`applicable component ${i} is not one of the ${count} components`);
    bitmap[i >> 3]! |= 1 << (i & 7);
  }
  const body = new Bytes()
    .u8(d.descriptors.length)
    .u32(flags)
    .u8(version.type)
    .u8(version.bytes.length)
    .u16(packageData.length);
  if (rev.referenceManifest) body.u32(manifest.length);
  body.put(bitmap).put(version.bytes);
  if (stamp !== undefined) body.u32(stamp);
  for (const desc of d.descriptors) body.put(encodeDescriptor(desc));
  body.put(packageData).put(manifest);
  return new Bytes()
    .u16(body.length + 2)
    .put(body.toBuffer())
    .toBuffer();
}

/** A ComponentImageInformation entry; ComponentLocationOffset and ComponentSize are filled in later. */
function componentEntry(rev: RevisionInfo, c: ComponentSpec): Buffer {
  if (c.opaqueData !== undefined && !rev.componentOpaqueData)
    throw new RangeError(`DSP0267 ${rev.revision} components have no opaque data`);
  const stamp = c.comparisonStamp ?? NO_STAMP;
  const version = encodeString(c.version);
  const entry = new Bytes()
    .u16(c.classification)
    .u16(c.identifier)
    .u32(stamp)
    .u16(c.options ?? (stamp === NO_STAMP ? 0 : 0b10))
    .u16(c.activationMethod ?? 0)
    .u32(0)
    .u32(0)
    .u8(version.type)
    .u8(version.bytes.length)
    .put(version.bytes);
  if (rev.componentOpaqueData) {
    const opaque = bytesOf(c.opaqueData ?? '');
    entry.u32(opaque.length).put(opaque);
  }
  return entry.toBuffer();
}

/** Little-endian field writer; values that do not fit throw RangeError from Buffer's writers. */
class Bytes {
  private readonly parts: Buffer[] = [];
  length = 0;

  u8(v: number): this {
    return this.field(1, (b) => b.writeUInt8(v));
  }

  u16(v: number): this {
    return this.field(2, (b) => b.writeUInt16LE(v));
  }

  u32(v: number): this {
    return this.field(4, (b) => b.writeUInt32LE(v));
  }

  put(b: Uint8Array): this {
    this.parts.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    this.length += b.length;
    return this;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.parts);
  }

  private field(size: number, write: (b: Buffer) => void): this {
    const b = Buffer.alloc(size);
    write(b);
    return this.put(b);
  }
}

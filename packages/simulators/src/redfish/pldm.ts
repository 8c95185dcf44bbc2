/**
 * Minimal reader for the PLDM firmware update package header (DMTF DSP0267 1.0 and 1.1 layouts):
 * just what a BMC needs to decide whether a package applies to it and whether it would be a
 * downgrade. Works on the first bytes of an upload; the images themselves are never read.
 */
const HEADER_V1_0 = 'f018878ccb7d49439800a02f059aca02';
const HEADER_V1_1 = '1244d2648d7d4718a030fc8a56587d5a';

export const DESCRIPTOR_UUID = 0x0002;

export interface PldmDescriptor {
  type: number;
  /** Lower-case hex of the descriptor data. */
  data: string;
}

export interface PldmDeviceRecord {
  descriptors: PldmDescriptor[];
  /** Indexes into `components` this device takes. */
  applicableComponents: number[];
  imageSetVersion: string;
}

export interface PldmComponent {
  classification: number;
  identifier: number;
  comparisonStamp: number;
  version: string;
}

export interface PldmPackage {
  formatRevision: number;
  headerSize: number;
  version: string;
  devices: PldmDeviceRecord[];
  components: PldmComponent[];
}

export class PldmError extends Error {}

export function parsePldmHeader(buf: Buffer): PldmPackage {
  const r = new Reader(buf);
  const id = r.bytes(16).toString('hex');
  if (id !== HEADER_V1_0 && id !== HEADER_V1_1) throw new PldmError(`unsupported PackageHeaderIdentifier ${id}`);
  const formatRevision = r.u8();
  const headerSize = r.u16();
  if (headerSize > buf.length) throw new PldmError(`package header (${headerSize} bytes) is longer than the bytes received`);
  r.bytes(13); // PackageReleaseDateTime
  const bitmapBits = r.u16();
  if (bitmapBits === 0 || bitmapBits % 8 !== 0) throw new PldmError(`ComponentBitmapBitLength ${bitmapBits} is not a multiple of 8`);
  const version = r.string();

  const devices: PldmDeviceRecord[] = [];
  const deviceCount = r.u8();
  for (let i = 0; i < deviceCount; i++) {
    const start = r.offset;
    const recordLength = r.u16();
    const descriptorCount = r.u8();
    r.u32(); // DeviceUpdateOptionFlags
    const versionType = r.u8();
    const versionLength = r.u8();
    const packageDataLength = r.u16();
    const applicableComponents = bitmap(r.bytes(bitmapBits / 8));
    const imageSetVersion = r.bytes(versionLength).toString(versionType === 1 || versionType === 2 ? 'utf8' : 'latin1');
    const descriptors: PldmDescriptor[] = [];
    for (let d = 0; d < descriptorCount; d++) {
      const type = r.u16();
      const length = r.u16();
      descriptors.push({ type, data: r.bytes(length).toString('hex') });
    }
    r.bytes(packageDataLength);
    if (r.offset - start !== recordLength) throw new PldmError(`device record ${i}: RecordLength ${recordLength} does not match its contents`);
    devices.push({ descriptors, applicableComponents, imageSetVersion });
  }
  if (id === HEADER_V1_1) {
    // Downstream device records: not used for matching here, skipped by their length.
    const downstream = r.u8();
    for (let i = 0; i < downstream; i++) {
      const length = r.u16();
      r.bytes(length - 2);
    }
  }

  const components: PldmComponent[] = [];
  const componentCount = r.u16();
  for (let i = 0; i < componentCount; i++) {
    const classification = r.u16();
    const identifier = r.u16();
    const comparisonStamp = r.u32();
    r.u16(); // ComponentOptions
    r.u16(); // RequestedComponentActivationMethod
    r.u32(); // ComponentLocationOffset
    r.u32(); // ComponentSize
    components.push({ classification, identifier, comparisonStamp, version: r.string() });
  }
  const checksum = r.u32();
  if (r.offset !== headerSize) throw new PldmError(`PackageHeaderSize ${headerSize} does not match the parsed header (${r.offset} bytes)`);
  if (crc32(buf.subarray(0, headerSize - 4)) !== checksum) throw new PldmError('PackageHeaderChecksum mismatch');
  for (const d of devices) {
    const bad = d.applicableComponents.find((c) => c >= components.length);
    if (bad !== undefined) throw new PldmError(`device record refers to component ${bad}, package has ${components.length}`);
  }
  return { formatRevision, headerSize, version, devices, components };
}

function bitmap(bytes: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes.length * 8; i++) if ((bytes[i >> 3]! >> (i & 7)) & 1) out.push(i);
  return out;
}

class Reader {
  offset = 0;
  constructor(private readonly buf: Buffer) {}
  private need(n: number): void {
    if (this.offset + n > this.buf.length) throw new PldmError(`package header truncated at byte ${this.offset}`);
  }
  u8(): number {
    this.need(1);
    return this.buf.readUInt8(this.offset++);
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16LE(this.offset);
    this.offset += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.offset);
    this.offset += 4;
    return v;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const v = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }
  /** A type byte, a length byte, then the string (types 1 = ASCII, 2 = UTF-8). */
  string(): string {
    const type = this.u8();
    const length = this.u8();
    return this.bytes(length).toString(type === 1 || type === 2 ? 'utf8' : 'latin1');
  }
}

// zlib.crc32 only arrived in Node 22; the header checksum is plain CRC-32 (IEEE 802.3).
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

import { FwpkgError } from './errors.js';
import { decodeString, isStringType } from './strings.js';

/**
 * Little-endian reads inside a window of the package. Every read names its DSP0267 field, so
 * running past the window (a record's RecordLength, the header's PackageHeaderSize) becomes a
 * `bad_field` FwpkgError at that field's offset, never a RangeError.
 */
export class Reader {
  constructor(
    private readonly buf: Uint8Array,
    public offset: number,
    readonly end: number,
    /** What the window is, naming the field that sets its end, e.g. "the record (RecordLength)". */
    private readonly limit: string,
  ) {}

  /** A window of `length` bytes from here, described by `limit`; this reader moves past it. */
  window(length: number, field: string, limit: string): Reader {
    this.need(length, field);
    const sub = new Reader(this.buf, this.offset, this.offset + length, limit);
    this.offset += length;
    return sub;
  }

  u8(field: string): number {
    this.need(1, field);
    return this.buf[this.offset++]!;
  }

  u16(field: string): number {
    this.need(2, field);
    const o = this.offset;
    this.offset += 2;
    return this.buf[o]! | (this.buf[o + 1]! << 8);
  }

  u32(field: string): number {
    this.need(4, field);
    const o = this.offset;
    this.offset += 4;
    return (this.buf[o]! | (this.buf[o + 1]! << 8) | (this.buf[o + 2]! << 16) | (this.buf[o + 3]! << 24)) >>> 0;
  }

  bytes(length: number, field: string): Uint8Array {
    this.need(length, field);
    const b = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return b;
  }

  hex(length: number, field: string): string {
    const b = this.bytes(length, field);
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
  }

  /** A string type byte, checked against DSP0267's string types. */
  stringType(field: string): number {
    const at = this.offset;
    const type = this.u8(field);
    if (!isStringType(type)) throw new FwpkgError('bad_field', field, at, `string type ${type} is reserved`);
    return type;
  }

  string(type: number, length: number, field: string): string {
    return decodeString(type, this.bytes(length, field));
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  private need(n: number, field: string): void {
    if (this.offset + n > this.end) {
      throw new FwpkgError(
        'bad_field',
        field,
        this.offset,
        `${n} bytes run past the end of ${this.limit} at byte ${this.end}`,
      );
    }
  }
}

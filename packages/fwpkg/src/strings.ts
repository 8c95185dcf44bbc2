// DSP0267 version strings: a type byte, a length byte, then the bytes (Table "string type").
const ASCII = 1;
const UTF8 = 2;
const UTF16 = 3;
const UTF16LE = 4;
const UTF16BE = 5;

export const isStringType = (type: number): boolean => type <= UTF16BE;

/** Decodes without throwing: malformed text is a display problem, not a parse failure. */
export function decodeString(type: number, bytes: Uint8Array): string {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type) {
    case UTF8:
      return b.toString('utf8');
    case UTF16LE:
      return b.toString('utf16le');
    case UTF16:
      // A byte-order mark decides; without one UTF-16 is big-endian.
      if (b[0] === 0xff && b[1] === 0xfe) return b.subarray(2).toString('utf16le');
      return swap16(b[0] === 0xfe && b[1] === 0xff ? b.subarray(2) : b);
    case UTF16BE:
      return swap16(b);
    default: // ASCII, and Unknown (0): bytes as they are
      return b.toString('latin1');
  }
}

function swap16(b: Buffer): string {
  const copy = Buffer.from(b.subarray(0, b.length & ~1));
  return copy.swap16().toString('utf16le');
}

/** ASCII when the text allows it (what DMTF's and NVIDIA's tools write), UTF-8 otherwise. */
export function encodeString(text: string): { type: number; bytes: Buffer } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > 255) throw new RangeError(`version string "${text.slice(0, 20)}…" is longer than 255 bytes`);
  return { type: bytes.length === text.length ? ASCII : UTF8, bytes };
}

/** Binary fields given as hex text or bytes (builder input). */
export function bytesOf(data: string | Uint8Array): Buffer {
  if (typeof data !== 'string') return Buffer.from(data);
  if (!/^(?:[0-9a-f]{2})*$/i.test(data)) throw new RangeError(`"${data.slice(0, 20)}" is not hex`);
  return Buffer.from(data, 'hex');
}

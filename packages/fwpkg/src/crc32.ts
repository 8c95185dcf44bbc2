// CRC-32 (IEEE 802.3, reflected, as zlib and DSP0267's checksums use). zlib.crc32 only arrived in
// Node 22. Slicing-by-8 tables: the payload checksum of a multi-GB 1.3 package runs over every byte.
const TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let s = 1; s < 8; s++) t[s * 256 + n] = (t[(s - 1) * 256 + n]! >>> 8) ^ t[t[(s - 1) * 256 + n]! & 0xff]!;
  }
  return t;
})();

/** CRC-32 of `data`; pass the CRC of the preceding bytes as `previous` to continue it, as zlib does. */
export function crc32(data: Uint8Array, previous = 0): number {
  const t = TABLES;
  let c = ~previous;
  let i = 0;
  for (const end8 = data.length - 7; i < end8; i += 8) {
    const lo = c ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24));
    const hi = data[i + 4]! | (data[i + 5]! << 8) | (data[i + 6]! << 16) | (data[i + 7]! << 24);
    c =
      t[7 * 256 + (lo & 0xff)]! ^
      t[6 * 256 + ((lo >>> 8) & 0xff)]! ^
      t[5 * 256 + ((lo >>> 16) & 0xff)]! ^
      t[4 * 256 + (lo >>> 24)]! ^
      t[3 * 256 + (hi & 0xff)]! ^
      t[2 * 256 + ((hi >>> 8) & 0xff)]! ^
      t[256 + ((hi >>> 16) & 0xff)]! ^
      t[hi >>> 24]!;
  }
  for (; i < data.length; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** DSP0240 timestamp104, as PackageReleaseDateTime carries it. Fields are as stored, not validated. */
export interface Timestamp104 {
  /** Minutes east of UTC (sint16). */
  utcOffset: number;
  microsecond: number;
  second: number;
  minute: number;
  hour: number;
  day: number;
  month: number;
  year: number;
  /** High nibble of the last byte. */
  utcResolution: number;
  /** Low nibble of the last byte. */
  timeResolution: number;
}

export const TIMESTAMP104_SIZE = 13;

/** All zeros: what packages without a release date carry. */
export const NO_TIMESTAMP: Timestamp104 = {
  utcOffset: 0,
  microsecond: 0,
  second: 0,
  minute: 0,
  hour: 0,
  day: 0,
  month: 0,
  year: 0,
  utcResolution: 0,
  timeResolution: 0,
};

export function decodeTimestamp104(b: Uint8Array): Timestamp104 {
  const utcOffset = ((b[0]! | (b[1]! << 8)) << 16) >> 16;
  return {
    utcOffset,
    microsecond: b[2]! | (b[3]! << 8) | (b[4]! << 16),
    second: b[5]!,
    minute: b[6]!,
    hour: b[7]!,
    day: b[8]!,
    month: b[9]!,
    year: b[10]! | (b[11]! << 8),
    utcResolution: b[12]! >> 4,
    timeResolution: b[12]! & 0x0f,
  };
}

export function encodeTimestamp104(t: Timestamp104 | Date): Buffer {
  const ts = t instanceof Date ? fromDate(t) : t;
  const b = Buffer.alloc(TIMESTAMP104_SIZE);
  b.writeInt16LE(ts.utcOffset, 0);
  b.writeUIntLE(ts.microsecond, 2, 3);
  b.writeUInt8(ts.second, 5);
  b.writeUInt8(ts.minute, 6);
  b.writeUInt8(ts.hour, 7);
  b.writeUInt8(ts.day, 8);
  b.writeUInt8(ts.month, 9);
  b.writeUInt16LE(ts.year, 10);
  b.writeUInt8((ts.utcResolution << 4) | ts.timeResolution, 12);
  return b;
}

function fromDate(d: Date): Timestamp104 {
  return {
    utcOffset: 0,
    microsecond: d.getUTCMilliseconds() * 1000,
    second: d.getUTCSeconds(),
    minute: d.getUTCMinutes(),
    hour: d.getUTCHours(),
    day: d.getUTCDate(),
    month: d.getUTCMonth() + 1,
    year: d.getUTCFullYear(),
    utcResolution: 0,
    timeResolution: 0,
  };
}

import { createHash, type Hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from './crc32.js';
import { FwpkgError, hex32 } from './errors.js';
import { scanFile } from './file-scan.js';
import { COMPONENT_LOCATION_OFFSET, COMPONENT_SIZE, HEADER_SIZE_KNOWN_AT, parseFwpkgHeader } from './header-parser.js';
import type { FwpkgHeader } from './types.js';

export interface FwpkgInspection {
  header: FwpkgHeader;
  /** Bytes in the package. */
  size: number;
  /** sha256 of the whole package, hex. */
  sha256: string;
  /** sha256 of each component image, hex, in `header.components` order. */
  componentSha256: string[];
}

interface Image {
  start: number;
  end: number;
  hash: Hash;
}

/**
 * A Writable that inspects a package as it streams past, keeping at most the header and the
 * current chunk: put it at the end of a pipeline (e.g. upload → tee to disk → inspector) and
 * await `result`. It hashes the package and every component image, checks the header as soon
 * as it has arrived (a bad header fails the pipeline early), and at the end checks that every
 * image lies inside the package and, for 1.3, PackagePayloadChecksum. Failures are FwpkgErrors,
 * both from the pipeline and from `result`.
 */
export class FwpkgInspector extends Writable {
  /** Settles when the stream ends or fails; never an unhandled rejection if left unread. */
  readonly result: Promise<FwpkgInspection>;
  private settle!: { resolve(v: FwpkgInspection): void; reject(e: Error): void };
  private settled = false;
  private readonly fileHash = createHash('sha256');
  private position = 0;
  /** Chunks of the header while it arrives; `need` is how many bytes parsing wants. */
  private prefix: Buffer[] = [];
  private prefixLength = 0;
  private need = HEADER_SIZE_KNOWN_AT;
  private header: FwpkgHeader | undefined;
  private payloadCrc = 0;
  private images: Image[] = [];
  /** Images not yet begun, latest start first; and those the stream is inside. */
  private upcoming: Image[] = [];
  private current: Image[] = [];

  constructor() {
    super();
    this.result = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.result.catch(() => undefined);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    try {
      this.consume(chunk);
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _final(done: (err?: Error | null) => void): void {
    try {
      const inspection = this.finish();
      this.settled = true;
      this.settle.resolve(inspection);
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    if (!this.settled) {
      this.settled = true;
      this.settle.reject(err ?? new Error('the package stream was destroyed before it ended'));
    }
    done(err);
  }

  private consume(chunk: Buffer): void {
    this.fileHash.update(chunk);
    const at = this.position;
    this.position += chunk.length;
    if (this.header) return this.payload(chunk, at);

    this.prefix.push(chunk);
    this.prefixLength += chunk.length;
    if (this.prefixLength < this.need) return;
    const prefix = Buffer.concat(this.prefix);
    let header;
    try {
      header = parseFwpkgHeader(prefix);
    } catch (err) {
      if (!(err instanceof FwpkgError && err.code === 'truncated')) throw err;
      this.prefix = [prefix];
      this.need = err.needBytes!;
      return;
    }
    this.prefix = [];
    this.header = header;
    this.images = header.components.map((c) => ({
      start: c.locationOffset,
      end: c.locationOffset + c.size,
      hash: createHash('sha256'),
    }));
    this.upcoming = [...this.images].sort((a, b) => b.start - a.start);
    this.payload(prefix.subarray(header.headerSize), header.headerSize);
  }

  /** Bytes after the header, starting at package offset `at`. */
  private payload(bytes: Buffer, at: number): void {
    if (this.header!.payloadChecksum !== undefined) this.payloadCrc = crc32(bytes, this.payloadCrc);
    const end = at + bytes.length;
    while (this.upcoming.length > 0 && this.upcoming.at(-1)!.start < end) this.current.push(this.upcoming.pop()!);
    for (const image of this.current) {
      const from = Math.max(image.start, at);
      const to = Math.min(image.end, end);
      if (to > from) image.hash.update(bytes.subarray(from - at, to - at));
    }
    this.current = this.current.filter((image) => image.end > end);
  }

  private finish(): FwpkgInspection {
    // Parsing what did arrive names the field the package stopped in.
    const header = this.header ?? parseFwpkgHeader(Buffer.concat(this.prefix));
    checkAfterLastByte(header, this.position, this.payloadCrc);
    return {
      header,
      size: this.position,
      sha256: this.fileHash.digest('hex'),
      componentSha256: this.images.map((i) => i.hash.digest('hex')),
    };
  }
}

/** What only the whole package shows: every image inside it and, for 1.3, PackagePayloadChecksum. */
export function checkAfterLastByte(header: FwpkgHeader, size: number, payloadCrc: number): void {
  for (const c of header.components) {
    if (c.locationOffset > size) {
      throw new FwpkgError(
        'out_of_bounds',
        'ComponentLocationOffset',
        c.recordOffset + COMPONENT_LOCATION_OFFSET,
        `${c.locationOffset} lies past the end of the ${size}-byte package`,
      );
    }
    if (c.locationOffset + c.size > size) {
      throw new FwpkgError(
        'out_of_bounds',
        'ComponentSize',
        c.recordOffset + COMPONENT_SIZE,
        `the image ends at byte ${c.locationOffset + c.size}, the package has ${size} bytes`,
      );
    }
  }
  if (header.payloadChecksum !== undefined && header.payloadChecksum !== payloadCrc) {
    throw new FwpkgError(
      'checksum_mismatch',
      'PackagePayloadChecksum',
      header.headerSize - 4,
      `stored ${hex32(header.payloadChecksum)}, computed ${hex32(payloadCrc)}`,
    );
  }
}

/** Inspects a package read once, chunk by chunk; memory stays at the header plus one chunk. */
export async function inspectFwpkg(
  source: AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
): Promise<FwpkgInspection> {
  const inspector = new FwpkgInspector();
  await pipeline(source, inspector);
  return inspector.result;
}

/** From this size on, a file is hashed on worker threads (starting them costs a few tens of ms). */
export const PARALLEL_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Inspects a package file: small ones as a stream in this thread, large ones in SLOT_BYTES reads
 * hashed on two worker threads (the package digest and the image digests cover the same bytes, and
 * SHA-256 cannot be split), so the whole inspection takes about as long as one SHA-256 pass.
 */
export async function inspectFwpkgFile(
  path: string,
  { parallelFromBytes = PARALLEL_FILE_BYTES }: { parallelFromBytes?: number } = {},
): Promise<FwpkgInspection> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    if (size < parallelFromBytes)
      return await inspectFwpkg(file.createReadStream({ highWaterMark: 1024 * 1024, autoClose: false }));
    const scan = await scanFile(file);
    checkAfterLastByte(scan.header, scan.size, scan.payloadCrc);
    return { header: scan.header, size: scan.size, sha256: scan.sha256, componentSha256: scan.componentSha256 };
  } finally {
    await file.close();
  }
}

import type { FileHandle } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { crc32 } from './crc32.js';
import { parseFwpkgHeader } from './header-parser.js';
import type { FwpkgHeader } from './types.js';

/** Bytes per read: large enough that per-chunk overhead (a read, two messages) vanishes. */
export const FILE_CHUNK = 4 * 1024 * 1024;
/** Chunks in flight: one being read while the others are hashed. */
const SLOTS = 4;

export interface FileScan {
  header: FwpkgHeader;
  size: number;
  sha256: string;
  componentSha256: string[];
  payloadCrc: number;
}

/**
 * The hashing threads. SHA-256 is inherently sequential, and the package's digest and its images'
 * digests cover the same bytes twice, so one thread hashes the package, another the images, while
 * the reading thread checks the header and the payload CRC. Plain JS (eval'd), so it runs the same
 * under tsx and compiled. Messages: {images: [start, end][]}, {slot, at, length} → {slot}, {end} → {digests}.
 */
const HASHER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const slots = workerData.slots.map((sab) => new Uint8Array(sab));
const whole = workerData.role === 'package' ? createHash('sha256') : undefined;
let images = [];
let upcoming = [];
let current = [];
parentPort.on('message', (m) => {
  if (m.images) {
    images = m.images.map(([start, end]) => ({ start, end, hash: createHash('sha256') }));
    upcoming = [...images].sort((a, b) => b.start - a.start);
    return;
  }
  if (m.end) {
    parentPort.postMessage({ digests: whole ? [whole.digest('hex')] : images.map((i) => i.hash.digest('hex')) });
    return;
  }
  const bytes = slots[m.slot].subarray(0, m.length);
  if (whole) whole.update(bytes);
  else {
    const end = m.at + m.length;
    while (upcoming.length > 0 && upcoming[upcoming.length - 1].start < end) current.push(upcoming.pop());
    for (const image of current) {
      const from = Math.max(image.start, m.at);
      const to = Math.min(image.end, end);
      if (to > from) image.hash.update(bytes.subarray(from - m.at, to - m.at));
    }
    current = current.filter((image) => image.end > end);
  }
  parentPort.postMessage({ slot: m.slot });
});
`;

/**
 * One pass over a package file in FILE_CHUNK reads into shared memory, hashed by two worker threads
 * while this one parses the header and runs the payload CRC (native). Memory: SLOTS chunks plus the
 * header, whatever the file size. The checks after the last byte (images inside the file, the
 * payload checksum) are the caller's, as for a streamed package.
 */
export async function scanFile(file: FileHandle): Promise<FileScan> {
  const buffers = Array.from({ length: SLOTS }, () => new SharedArrayBuffer(FILE_CHUNK));
  /** Per slot: hashers still reading it, and who waits for it to be free. */
  const busy = new Array<number>(SLOTS).fill(0);
  const freed = new Array<(() => void) | undefined>(SLOTS);
  let fail!: (err: Error) => void;
  const failure = new Promise<never>((_, reject) => (fail = reject));
  failure.catch(() => undefined);
  const digestWaiters: ((digests: string[]) => void)[] = [];

  const workers = ['package', 'images'].map((role, index) => {
    const worker = new Worker(HASHER, { eval: true, execArgv: [], workerData: { role, slots: buffers } });
    worker.on('message', (m: { slot?: number; digests?: string[] }) => {
      if (m.digests) return digestWaiters[index]?.(m.digests);
      if (--busy[m.slot!]! === 0) freed[m.slot!]?.();
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`a package hashing thread exited (code ${code})`)));
    return worker;
  });
  const imageWorker = workers[1]!;
  const slotFree = (slot: number) =>
    busy[slot] === 0 ? undefined : Promise.race([new Promise<void>((r) => (freed[slot] = r)), failure]);

  try {
    let header: FwpkgHeader | undefined;
    let payloadCrc = 0;
    let position = 0;
    for (let slot = 0; ; slot = (slot + 1) % SLOTS) {
      await slotFree(slot);
      const view = new Uint8Array(buffers[slot]!);
      const { bytesRead } = await Promise.race([file.read(view, 0, FILE_CHUNK, position), failure]);
      if (bytesRead === 0) break;
      const chunk = view.subarray(0, bytesRead);
      let payloadFrom = 0;
      if (!header) {
        // A header is at most 65535 bytes, so the first chunk holds it unless the file is shorter,
        // in which case parsing it names the field the file stops in, as for a stream.
        header = parseFwpkgHeader(chunk);
        imageWorker.postMessage({
          images: header.components.map((c) => [c.locationOffset, c.locationOffset + c.size]),
        });
        payloadFrom = header.headerSize;
      }
      if (header.payloadChecksum !== undefined) payloadCrc = crc32(chunk.subarray(payloadFrom), payloadCrc);
      busy[slot] = workers.length;
      for (const w of workers) w.postMessage({ slot, at: position, length: bytesRead });
      position += bytesRead;
    }
    // An empty file: the parser names the field it stops in.
    header ??= parseFwpkgHeader(new Uint8Array(0));

    const [packageDigests, componentSha256] = await Promise.all(
      workers.map((w, index) => {
        const digests = new Promise<string[]>((resolve) => (digestWaiters[index] = resolve));
        w.postMessage({ end: true });
        return Promise.race([digests, failure]);
      }),
    );
    return { header, size: position, sha256: packageDigests![0]!, componentSha256: componentSha256!, payloadCrc };
  } finally {
    for (const w of workers) {
      w.removeAllListeners('exit');
      void w.terminate();
    }
  }
}

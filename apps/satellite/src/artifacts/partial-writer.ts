import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { openDirect, ParallelSha256, SlotFile } from '@fleet/fwpkg';
import { ArtifactFetchError } from './artifact-errors.js';
import type { BlobDownload } from './blob-download.js';

/** Disk I/O in 1 MiB chunks: far fewer syscalls than the defaults, and memory stays small. */
const ioChunk = 1 << 20;

/**
 * Appends a response body to the partial file after the `offset` bytes already there, and digests the whole
 * file's bytes (that prefix, re-read, then the body). Progress counts only bytes the kernel has taken, and a
 * transfer that breaks off or is cancelled keeps what arrived (a valid prefix): the file is settled before
 * `write` returns, so a resume that starts next never races a late write.
 */
export interface PartialWriter {
  /** Bytes of the blob on disk. */
  readonly onDisk: number;
  write(body: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<void>;
  /** The sha256 of every byte on disk, once `write` returned. */
  digest(): Promise<string>;
}

function checkRoom(d: BlobDownload, bytes: number): void {
  if (bytes > d.size)
    throw new ArtifactFetchError(
      'size_mismatch',
      d.digest,
      d.url,
      `the hub sent more than the ${d.size} bytes expected`,
    );
}

/** In this thread: hashes each chunk as it comes and appends ~1 MiB batches. Small blobs. */
class InThreadWriter implements PartialWriter {
  private readonly hash = createHash('sha256');
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly d: BlobDownload,
    public onDisk: number,
  ) {}

  async write(body: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<void> {
    if (this.onDisk > 0)
      for await (const chunk of createReadStream(this.d.partialPath, { highWaterMark: ioChunk, end: this.onDisk - 1 }))
        this.hash.update(chunk as Buffer);
    const file = await open(this.d.partialPath, this.onDisk > 0 ? 'a' : 'w');
    try {
      for await (const chunk of body) {
        checkRoom(this.d, this.onDisk + this.pendingBytes + chunk.length);
        this.hash.update(chunk);
        this.pending.push(chunk);
        this.pendingBytes += chunk.length;
        if (this.pendingBytes >= ioChunk) await this.flush(file);
      }
    } finally {
      try {
        await this.flush(file);
      } finally {
        await file.close();
      }
    }
  }

  digest(): Promise<string> {
    return Promise.resolve(this.hash.digest('hex'));
  }

  private async flush(file: FileHandle): Promise<void> {
    if (this.pendingBytes === 0) return;
    // Taken before writing: a failed write is never retried, which could append a batch twice.
    const batch = this.pending;
    const bytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    const { bytesWritten } = await file.writev(batch);
    if (bytesWritten !== bytes)
      throw new Error(`a short write to ${this.d.partialPath}: ${bytesWritten} of ${bytes} bytes`);
    this.onDisk += bytesWritten;
    this.d.onProgress?.(this.onDisk);
  }
}

/**
 * For large blobs: the bytes go into 4 MiB shared-memory slots hashed on a worker thread, and each slot is
 * written at its offset, so the thread on the socket neither hashes nor writes in small pieces. A body that
 * breaks off still has what arrived written (the last slot is flushed) before the error goes on.
 */
class ParallelWriter implements PartialWriter {
  private readonly resumedAt: number;
  private result: Promise<{ sha256: string }> | undefined;
  /** Slot writes, one after another: the file only ever grows by a contiguous prefix, even when one fails. */
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly d: BlobDownload,
    public onDisk: number,
  ) {
    this.resumedAt = onDisk;
  }

  async write(body: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<void> {
    const file = await open(this.d.partialPath, this.resumedAt > 0 ? 'r+' : 'w');
    let slotFile: SlotFile | undefined;
    let hasher: ParallelSha256 | undefined;
    let failure: unknown;
    try {
      const target = (slotFile = await SlotFile.over(file, this.d.openDirect ?? openDirect, this.d.onDirectFallback));
      hasher = new ParallelSha256((bytes, at) => (this.writes = this.writes.then(() => this.store(target, bytes, at))));
      const slots = hasher;
      // Its failures surface through `feed` and `finished` below.
      slots.on('error', () => undefined);
      this.result = slots.result;
      const feed = async (chunk: Buffer) => {
        if (slots.errored) throw slots.errored;
        if (!slots.write(chunk)) await once(slots, 'drain');
      };
      try {
        if (this.resumedAt > 0)
          for await (const chunk of file.createReadStream({
            highWaterMark: ioChunk,
            start: 0,
            end: this.resumedAt - 1,
            autoClose: false,
          }))
            await feed(chunk as Buffer);
        let received = this.resumedAt;
        for await (const chunk of body) {
          received += chunk.length;
          checkRoom(this.d, received);
          await feed(chunk);
        }
      } catch (err) {
        failure = err;
      }
      // Flushes the last slot, also after a failure: what arrived is a valid prefix worth keeping.
      slots.end();
      await finished(slots).catch((err: unknown) => (failure ??= err));
    } finally {
      // Settled before returning, whatever failed: a resume that starts next must not race a late write.
      await this.writes.catch(() => undefined);
      hasher?.destroy();
      try {
        await slotFile?.close();
      } finally {
        await file.close();
      }
    }
    if (failure !== undefined) throw failure;
  }

  async digest(): Promise<string> {
    return (await this.result!).sha256;
  }

  /** Writes the part of a slot past the resumed prefix (which is on disk already) at its offset. */
  private async store(file: SlotFile, bytes: Uint8Array, at: number): Promise<void> {
    const skip = Math.max(0, this.resumedAt - at);
    if (skip >= bytes.length) return;
    await file.write(bytes.subarray(skip), at + skip).catch((err: Error) => {
      throw new Error(`writing ${this.d.partialPath} at byte ${at + skip}: ${err.message}`, { cause: err });
    });
    this.onDisk = at + bytes.length;
    this.d.onProgress?.(this.onDisk);
  }
}

/** The writer for a download resuming after `offset` bytes on disk: on worker threads when `parallel`. */
export function partialWriter(d: BlobDownload, offset: number, parallel: boolean): PartialWriter {
  return parallel ? new ParallelWriter(d, offset) : new InThreadWriter(d, offset);
}

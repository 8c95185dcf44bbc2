import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { finished } from 'node:stream/promises';
import { request, type Dispatcher } from 'undici';
import { PARALLEL_FILE_BYTES, ParallelSha256 } from '@fleet/fwpkg';
import { ArtifactFetchError } from './artifact-errors.js';

/** Disk I/O in 1 MiB chunks: far fewer syscalls than the defaults, and memory stays small. */
const ioChunk = 1 << 20;

export interface BlobDownload {
  /** `<hub>/v1/firmware/blobs/<digest>`. */
  url: string;
  token: string;
  digest: string;
  size: number;
  /** Where the bytes accumulate; what is there already is resumed, after re-hashing it. */
  partialPath: string;
  /** Where the verified blob ends up. */
  finalPath: string;
  dispatcher: Dispatcher;
  signal?: AbortSignal | undefined;
  /** Bytes of the blob on disk so far (resumed + received), as they grow. */
  onProgress?: ((bytes: number) => void) | undefined;
  /** From this size on, the blob is hashed on a worker thread (PARALLEL_FILE_BYTES unless set). */
  parallelFromBytes?: number | undefined;
}

/** The size of what an earlier attempt left in the partial file: the prefix to resume after (0: none usable). */
async function resumePoint(d: BlobDownload): Promise<number> {
  const existing = await stat(d.partialPath).catch(() => undefined);
  if (!existing) return 0;
  if (existing.size > d.size) {
    await rm(d.partialPath, { force: true });
    return 0;
  }
  return existing.size;
}

/**
 * Appends a response body to the partial file after the `offset` bytes already there, and digests the whole
 * file's bytes (that prefix, re-read, then the body). Progress counts only bytes the kernel has taken, and a
 * transfer that breaks off or is cancelled keeps what arrived (a valid prefix): the file is settled before
 * `write` returns, so a resume that starts next never races a late write.
 */
interface PartialWriter {
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
    const hasher = new ParallelSha256(
      (bytes, at) => (this.writes = this.writes.then(() => this.store(file, bytes, at))),
    );
    // Its failures surface through `feed` and `finished` below.
    hasher.on('error', () => undefined);
    this.result = hasher.result;
    const feed = async (chunk: Buffer) => {
      if (hasher.errored) throw hasher.errored;
      if (!hasher.write(chunk)) await once(hasher, 'drain');
    };
    let failure: unknown;
    try {
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
      hasher.end();
      await finished(hasher).catch((err: unknown) => (failure ??= err));
    } finally {
      hasher.destroy();
      await file.close();
    }
    if (failure !== undefined) throw failure;
  }

  async digest(): Promise<string> {
    return (await this.result!).sha256;
  }

  /** Writes the part of a slot past the resumed prefix (which is on disk already) at its offset. */
  private async store(file: FileHandle, bytes: Uint8Array, at: number): Promise<void> {
    const skip = Math.max(0, this.resumedAt - at);
    if (skip >= bytes.length) return;
    const length = bytes.length - skip;
    const { bytesWritten } = await file.write(bytes, skip, length, at + skip);
    if (bytesWritten !== length)
      throw new Error(`a short write to ${this.d.partialPath}: ${bytesWritten} of ${length} bytes`);
    this.onDisk = at + bytes.length;
    this.d.onProgress?.(this.onDisk);
  }
}

function failureFor(d: BlobDownload, status: number): ArtifactFetchError {
  if (status === 416)
    return new ArtifactFetchError(
      'size_mismatch',
      d.digest,
      d.url,
      `the hub's blob is shorter than the partial download; the catalog says ${d.size} bytes`,
      { status },
    );
  if (status === 404)
    return new ArtifactFetchError('not_found', d.digest, d.url, 'the hub has no blob with this digest', { status });
  if (status === 401 || status === 403)
    return new ArtifactFetchError(
      'unauthorized',
      d.digest,
      d.url,
      `the hub refused the satellite's token (HTTP ${status})`,
      { status },
    );
  return new ArtifactFetchError('unavailable', d.digest, d.url, `the hub answered HTTP ${status}`, { status });
}

/** The byte the response's body starts at: `have` for a 206 that resumes there, 0 for a full 200. */
function bodyOffset(
  d: BlobDownload,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  have: number,
): number {
  if (status === 200) {
    const length = Number(headers['content-length']);
    if (headers['content-length'] !== undefined && length !== d.size)
      throw new ArtifactFetchError(
        'size_mismatch',
        d.digest,
        d.url,
        `the hub's blob has ${length} bytes, the catalog says ${d.size}`,
      );
    return 0;
  }
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(headers['content-range']));
  if (!range || Number(range[1]) !== have)
    throw new ArtifactFetchError(
      'unavailable',
      d.digest,
      d.url,
      `unexpected Content-Range ${String(headers['content-range'])} for a resume at byte ${have}`,
    );
  if (Number(range[3]) !== d.size)
    throw new ArtifactFetchError(
      'size_mismatch',
      d.digest,
      d.url,
      `the hub's blob has ${range[3]} bytes, the catalog says ${d.size}`,
    );
  return have;
}

/**
 * Fetches one blob from the hub into `finalPath`, resuming a partial file with a Range request,
 * and renames it into place only once its sha256 matches the digest. A transfer that breaks off
 * keeps the partial file for the next attempt; a digest mismatch deletes it. Returns the bytes
 * received over the network. Memory stays at a few chunks.
 */
export async function downloadBlob(d: BlobDownload): Promise<number> {
  const parallel = d.size >= (d.parallelFromBytes ?? PARALLEL_FILE_BYTES);
  const writerAt = (offset: number): PartialWriter =>
    parallel ? new ParallelWriter(d, offset) : new InThreadWriter(d, offset);
  const have = await resumePoint(d);
  let writer = writerAt(have);
  let received = 0;
  if (have < d.size) {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(d.url, {
        dispatcher: d.dispatcher,
        signal: d.signal,
        headers: { authorization: `Bearer ${d.token}`, ...(have > 0 ? { range: `bytes=${have}-` } : {}) },
      });
    } catch (err) {
      d.signal?.throwIfAborted();
      throw new ArtifactFetchError(
        'unavailable',
        d.digest,
        d.url,
        `the hub could not be reached: ${(err as Error).message}`,
        { cause: err },
      );
    }
    if (res.statusCode !== 200 && res.statusCode !== 206) {
      await res.body.dump();
      // A partial the hub cannot continue is no prefix of its blob.
      if (res.statusCode === 416) await rm(d.partialPath, { force: true });
      throw failureFor(d, res.statusCode);
    }
    const offset = bodyOffset(d, res.statusCode, res.headers, have);
    if (offset !== have) writer = writerAt(offset); // the hub sent the whole blob: start over
    try {
      await writer.write(res.body);
    } catch (err) {
      d.signal?.throwIfAborted();
      if (err instanceof ArtifactFetchError) throw err;
      throw new ArtifactFetchError(
        'unavailable',
        d.digest,
        d.url,
        `the transfer broke off after ${writer.onDisk} of ${d.size} bytes: ${(err as Error).message}`,
        { cause: err },
      );
    }
    received = writer.onDisk - offset;
  } else await writer.write([]);
  if (writer.onDisk !== d.size)
    throw new ArtifactFetchError(
      'unavailable',
      d.digest,
      d.url,
      `the transfer ended after ${writer.onDisk} of ${d.size} bytes`,
    );
  const actual = await writer.digest();
  if (actual !== d.digest) {
    await rm(d.partialPath, { force: true });
    throw new ArtifactFetchError(
      'digest_mismatch',
      d.digest,
      d.url,
      `the bytes received hash to ${actual}; the partial download was deleted`,
    );
  }
  await fsync(d.partialPath);
  await rename(d.partialPath, d.finalPath);
  await fsync(dirname(d.finalPath));
  return received;
}

/** Flushes a file, or a directory's entries (for a rename), to disk. */
async function fsync(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

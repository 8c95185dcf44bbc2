import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, open, readdir, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { openDirect, SlotFile, type DirectOpener, type DirectWriteFallback } from '@fleet/fwpkg';

/** sha256 of the content, lower-case hex: the only key a blob has. */
export const blobDigestPattern = /^[0-9a-f]{64}$/;

/** An inclusive byte range, as HTTP ranges are. */
export interface ByteRange {
  start: number;
  end: number;
}

/** A write in progress: stream the bytes in, then commit them under their digest or abort. */
export interface BlobUpload {
  /** For bytes as they come; an upload uses either this or `writeSlot`, not both. */
  readonly stream: Writable;
  /**
   * Writes a filled slot (SlotForward) at its offset. Calls may overlap (a slot is handed over while the one before
   * is still being written); the writes themselves run one after another, and none runs after one failed.
   */
  writeSlot(bytes: Uint8Array, at: number): Promise<void>;
  /** Makes the bytes durable under `digest`; when that blob exists already, these (same) bytes are dropped. */
  commit(digest: string): Promise<void>;
  /** Drops everything written so far. Safe to call more than once, and after a failed commit. */
  abort(): Promise<void>;
}

/** Who a write is for, for what the store logs about it: the API request that uploads it. */
export interface BlobWriteContext {
  requestId?: string;
}

/**
 * Content-addressed blob storage. The hub keeps firmware packages on local disk
 * (FileBlobStore); an object store implements the same operations.
 */
export interface BlobStore {
  beginWrite(context?: BlobWriteContext): Promise<BlobUpload>;
  /** The blob's bytes (the whole blob, or one range), or undefined when it does not exist. */
  read(digest: string, range?: ByteRange): Promise<Readable | undefined>;
  stat(digest: string): Promise<{ size: number } | undefined>;
  /** True when something was deleted. */
  delete(digest: string): Promise<boolean>;
}

/** Disk I/O in 1 MiB chunks: far fewer syscalls than the 16/64 KiB defaults, and memory stays small. */
const ioChunk = 1 << 20;

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

function checkDigest(digest: string): string {
  if (!blobDigestPattern.test(digest)) throw new Error(`not a sha256 digest: ${digest}`);
  return digest;
}

export interface FileBlobStoreOptions {
  /** How slots get a handle around the page cache (SlotFile); tests put a failing disk there. */
  openDirect?: DirectOpener;
  /** An upload's file went back to the page cache (SlotFile's fallbacks), with its temp file and its context. */
  onDirectFallback?: (fallback: DirectWriteFallback & BlobWriteContext & { path: string }) => void;
}

/**
 * Blobs on local disk at `<dir>/sha256/<first two hex digits>/<digest>`. Writes go to
 * `<dir>/tmp` first and are fsynced and renamed into place, so a blob is either
 * complete or absent; a crash leaves at most a temp file, which `sweepStaleTemp` removes.
 */
export class FileBlobStore implements BlobStore {
  private readonly tmpDir: string;

  constructor(
    readonly dir: string,
    private readonly options: FileBlobStoreOptions = {},
  ) {
    this.tmpDir = join(dir, 'tmp');
  }

  pathOf(digest: string): string {
    return join(this.dir, 'sha256', checkDigest(digest).slice(0, 2), digest);
  }

  /**
   * Removes temp files not written to for `olderThanMs`: leftovers of a crashed process.
   * The age guard spares uploads in flight in another process sharing the directory.
   */
  async sweepStaleTemp(olderThanMs = 3_600_000): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.tmpDir);
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
    const removed: string[] = [];
    for (const name of names) {
      const path = join(this.tmpDir, name);
      const info = await stat(path).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs >= olderThanMs) {
        await rm(path, { force: true });
        removed.push(path);
      }
    }
    return removed;
  }

  async beginWrite(context: BlobWriteContext = {}): Promise<BlobUpload> {
    // Directories are made on first use: a hub that never stores a package needs no writable dir.
    await mkdir(this.tmpDir, { recursive: true });
    const tempPath = join(this.tmpDir, randomUUID());
    const handle = await open(tempPath, 'wx', 0o644);
    const { openDirect: opener = openDirect, onDirectFallback } = this.options;
    const slotFile = () =>
      SlotFile.over(
        handle,
        opener,
        onDirectFallback && ((f) => onDirectFallback({ ...f, ...context, path: tempPath })),
      );
    return new FileBlobUpload(this, handle, tempPath, slotFile);
  }

  async read(digest: string, range?: ByteRange): Promise<Readable | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(digest), 'r');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    // The open handle pins the file: a delete from now on does not cut this read short.
    return handle.createReadStream({
      highWaterMark: ioChunk,
      ...(range ? { start: range.start, end: range.end } : {}),
    });
  }

  async stat(digest: string): Promise<{ size: number } | undefined> {
    try {
      return { size: (await stat(this.pathOf(digest))).size };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async delete(digest: string): Promise<boolean> {
    try {
      await unlink(this.pathOf(digest));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }
}

class FileBlobUpload implements BlobUpload {
  readonly stream: Writable;
  private done = false;
  private slotFile: Promise<SlotFile> | undefined;
  /** The slot writes in order; never rejects (a failure is kept in `stopped`). */
  private slotWrites: Promise<void> = Promise.resolve();
  /** The first slot write's failure, or the abort: no slot is written after it. */
  private stopped: Error | undefined;

  constructor(
    private readonly store: FileBlobStore,
    private readonly handle: FileHandle,
    private readonly tempPath: string,
    /** The upload's SlotFile, opened at the first slot. */
    private readonly openSlotFile: () => Promise<SlotFile>,
  ) {
    // The handle stays open after the stream finishes, for the fsync in commit.
    this.stream = handle.createWriteStream({ autoClose: false, highWaterMark: ioChunk });
  }

  writeSlot(bytes: Uint8Array, at: number): Promise<void> {
    if (this.done) return Promise.reject(new Error('blob upload already finished'));
    this.slotFile ??= this.openSlotFile();
    // One write at a time: an upload holds at most one thread of libuv's pool, however slow the disk.
    const write = this.slotWrites.then(async () => {
      if (this.stopped) throw this.stopped;
      await (await this.slotFile!).write(bytes, at);
    });
    this.slotWrites = write.catch((err: Error) => void (this.stopped ??= err));
    return write;
  }

  async commit(digest: string): Promise<void> {
    const target = this.store.pathOf(digest);
    if (this.done) throw new Error('blob upload already finished');
    this.done = true;
    try {
      if (!this.stream.writableFinished) await finished(this.stream.end());
      await this.slotWrites;
      if (this.stopped) throw this.stopped;
      await this.handle.sync();
      await this.closeHandle();
      const shard = dirname(target);
      await mkdir(shard, { recursive: true });
      if (await this.store.stat(digest)) {
        await unlink(this.tempPath);
        return;
      }
      await rename(this.tempPath, target);
      await syncDir(shard);
    } catch (err) {
      await this.discard();
      throw err;
    }
  }

  async abort(): Promise<void> {
    this.done = true;
    this.stopped ??= new Error('the blob upload was aborted');
    await this.discard();
  }

  private async discard(): Promise<void> {
    await this.closeHandle().catch(() => undefined);
    await rm(this.tempPath, { force: true });
  }

  /**
   * Closes the direct handle once the slot writes queued are done or skipped, then the stream (which holds a
   * reference on the handle until it closes; the handle's close waits for it) and the handle, whatever failed first.
   */
  private async closeHandle(): Promise<void> {
    try {
      await this.slotWrites;
      await (await this.slotFile?.catch(() => undefined))?.close();
    } finally {
      if (!this.stream.closed) {
        const closed = once(this.stream, 'close');
        this.stream.destroy();
        await closed;
      }
      await this.handle.close();
    }
  }
}

/** Makes a rename durable: the directory entry is only on disk once the directory is synced. */
async function syncDir(path: string): Promise<void> {
  const dir = await open(path, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

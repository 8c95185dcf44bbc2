import { constants } from 'node:fs';
import { open, statfs, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** What SlotFile needs of a handle. */
export interface SlotHandle {
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  close(): Promise<void>;
}

/** Opens a second handle on the caller's file that writes around the page cache, or says there is none. */
export type DirectOpener = (buffered: FileHandle) => Promise<SlotHandle | undefined>;

/** The reasons of DirectWriteFallback, for a metric that shows each at 0 before the first. */
export const directWriteFallbackReasons = ['open_failed', 'write_refused'] as const;

/**
 * Why a file meant to be written around the page cache is written through it after all: opening the direct handle
 * failed (`open_failed`: say, no descriptor left), or the kernel refused a direct write (`write_refused`: EINVAL, an
 * alignment this device or file system wants and the slots do not have). Either is worth an operator's look: the
 * writes still succeed, but each GiB costs page cache again.
 */
export interface DirectWriteFallback {
  reason: (typeof directWriteFallbackReasons)[number];
  error: Error;
}

/** Tells `onFallback`; what it throws is its own failure, never the write's (a log line must not fail an upload). */
function report(
  onFallback: ((fallback: DirectWriteFallback) => void) | undefined,
  fallback: DirectWriteFallback,
): void {
  try {
    onFallback?.(fallback);
  } catch {
    // ignored: see above
  }
}

/**
 * File systems on a local block device (f_type): ext2/3/4, XFS, btrfs. On a network file system (NFS, CephFS, SMB,
 * FUSE) a direct write waits for the server's commit, one 4 MiB write at a time, holding a thread of libuv's pool;
 * on tmpfs the page cache is the storage; elsewhere, support varies. Those keep the page cache.
 */
const LOCAL_BLOCK_FILE_SYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e]);

/** O_DIRECT, where this platform has it and the rest (reopening by /proc/self/fd, statfs's f_type) holds. */
const directFlag = () =>
  process.platform === 'linux' ? (constants as Record<string, number | undefined>)['O_DIRECT'] : undefined;

/** Whether the file system holding `path` is one of LOCAL_BLOCK_FILE_SYSTEMS. */
async function onLocalBlockFileSystem(path: string): Promise<boolean> {
  // f_type is a signed 32-bit int on some 32-bit ABIs: its low 32 bits are the magic number everywhere.
  const { type } = await statfs(path, { bigint: true });
  return LOCAL_BLOCK_FILE_SYSTEMS.has(Number(BigInt.asUintN(32, type)));
}

/** The caller's file opened again with O_DIRECT (by its descriptor, so it is the same file whatever its name now). */
export const openDirect: DirectOpener = async (buffered) => {
  const flag = directFlag();
  const self = `/proc/self/fd/${buffered.fd}`;
  if (flag === undefined || !(await onLocalBlockFileSystem(self))) return undefined;
  return open(self, constants.O_WRONLY | flag);
};

/**
 * Whether slots written into `dir` go around the page cache (for a start-up log line: which way a process writes).
 * A folder not made yet is judged by the nearest one above it that exists.
 */
export async function directWritesIn(dir: string): Promise<boolean> {
  if (directFlag() === undefined) return false;
  for (let at = resolve(dir); ; at = dirname(at)) {
    try {
      return await onLocalBlockFileSystem(at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) return false;
    }
  }
}

async function writeAll(handle: SlotHandle, bytes: Uint8Array, at: number): Promise<void> {
  const { bytesWritten } = await handle.write(bytes, 0, bytes.length, at);
  if (bytesWritten !== bytes.length) throw new Error(`a short write: ${bytesWritten} of ${bytes.length} bytes`);
}

/**
 * Writes filled slots (SLOT_BYTES of page-aligned shared memory) into a file at their offsets, around the page cache
 * (O_DIRECT) where a write is aligned to the file system's blocks. A multi-GiB package then takes no cache memory
 * that others' pages would be evicted for (memory this VM charges about 2 s of kernel time per GiB:
 * docs/firmware-data-paths.md), and the closing fsync has only the device's cache to flush. What is not aligned (the
 * last slot, the slot a resumed download starts in when it starts mid-block) goes through `buffered`, the caller's
 * own handle; so does everything where there is no direct handle (openDirect) or the kernel refuses one with EINVAL.
 * The two handles never write the same block, and Linux keeps their views of the file coherent. One write at a time.
 */
export class SlotFile {
  private constructor(
    private readonly buffered: FileHandle,
    private direct: SlotHandle | undefined,
    private readonly alignment: number,
    /** Bytes may sit in the page cache unflushed: written through it since the last datasync, or before this began. */
    private cachedSinceSync: boolean,
    private readonly onFallback: ((fallback: DirectWriteFallback) => void) | undefined,
  ) {}

  /**
   * `buffered`: the caller's handle, open for writing; it stays the caller's to sync and close. `onFallback` hears of
   * a file that goes back to the page cache (a metric, a log line); a file system without O_DIRECT is no fallback.
   */
  static async over(
    buffered: FileHandle,
    openDirectHandle: DirectOpener = openDirect,
    onFallback?: (fallback: DirectWriteFallback) => void,
  ): Promise<SlotFile> {
    const { blksize, size } = await buffered.stat();
    const direct = await openDirectHandle(buffered).catch((error: Error) => {
      report(onFallback, { reason: 'open_failed', error });
      return undefined;
    });
    return new SlotFile(buffered, direct, Math.max(4096, blksize), size > 0, onFallback);
  }

  /** Whether aligned writes still go around the page cache. */
  get bypassesCache(): boolean {
    return this.direct !== undefined;
  }

  /** Writes all of `bytes` at `at`; a short write is an error (the file must only ever hold a contiguous prefix). */
  async write(bytes: Uint8Array, at: number): Promise<void> {
    const aligned = [at, bytes.length, bytes.byteOffset].every((n) => n % this.alignment === 0);
    const direct = aligned ? this.direct : undefined;
    if (!direct) {
      await writeAll(this.buffered, bytes, at);
      this.cachedSinceSync = true;
      return;
    }
    // A direct write reaches the disk, and grows the file, before cached bytes below it are written back: flushed
    // first, a crash cannot leave the file's size covering bytes never written (a resume trusts the size).
    if (this.cachedSinceSync) {
      await this.buffered.datasync();
      this.cachedSinceSync = false;
    }
    try {
      await writeAll(direct, bytes, at);
    } catch (err) {
      // EINVAL comes before any byte moved: the memory was not aligned after all, or the device wants more.
      if ((err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
      await this.close().catch(() => undefined);
      report(this.onFallback, { reason: 'write_refused', error: err as Error });
      return this.write(bytes, at);
    }
  }

  /** Closes the direct handle (the caller's stays open). Safe more than once. */
  async close(): Promise<void> {
    const direct = this.direct;
    this.direct = undefined;
    await direct?.close();
  }
}

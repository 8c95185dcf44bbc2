import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** What O_DIRECT asks of a write: its file offset, length and memory aligned to the device's blocks (4 KiB here). */
const DIRECT_ALIGNMENT = 4096;

const aligned = (n: number) => n % DIRECT_ALIGNMENT === 0;

/**
 * Writes filled slots (SLOT_BYTES of page-aligned shared memory) into a file at their offsets, around the page cache
 * (O_DIRECT) where a write is aligned. A multi-GiB package then takes no cache memory that others' pages would be
 * evicted for (memory this VM charges about 2 s of kernel time per GiB: docs/firmware-data-paths.md), and the
 * closing fsync has only the device's cache to flush, not the whole file. What is not aligned (the rest of a slot a
 * resumed download starts in, the last slot) goes through `buffered`, the caller's own handle on the same file, and
 * so does everything where the file system refuses O_DIRECT. Linux keeps the two handles' views of the file coherent.
 */
export class SlotFile {
  private constructor(
    private readonly buffered: FileHandle,
    private direct: FileHandle | undefined,
  ) {}

  /** `buffered`: the caller's handle on `path`, open for writing; it stays the caller's to sync and close. */
  static async over(path: string, buffered: FileHandle): Promise<SlotFile> {
    const flag = (constants as Record<string, number | undefined>)['O_DIRECT'];
    const direct = flag === undefined ? undefined : await open(path, constants.O_WRONLY | flag).catch(() => undefined);
    return new SlotFile(buffered, direct);
  }

  /** Whether aligned writes still go around the page cache. */
  get bypassesCache(): boolean {
    return this.direct !== undefined;
  }

  /** Writes all of `bytes` at `at`; a short write is an error (the file must only ever hold a contiguous prefix). */
  async write(bytes: Uint8Array, at: number): Promise<void> {
    const direct = this.direct && aligned(at) && aligned(bytes.length) && aligned(bytes.byteOffset);
    let bytesWritten: number;
    try {
      ({ bytesWritten } = await (direct ? this.direct! : this.buffered).write(bytes, 0, bytes.length, at));
    } catch (err) {
      // EINVAL comes before any byte moved: the memory was not page-aligned after all, or the device wants more.
      if (!direct || (err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
      await this.close();
      return this.write(bytes, at);
    }
    if (bytesWritten !== bytes.length) throw new Error(`a short write: ${bytesWritten} of ${bytes.length} bytes`);
  }

  /** Closes the O_DIRECT handle (the caller's stays open). Safe more than once. */
  async close(): Promise<void> {
    const direct = this.direct;
    this.direct = undefined;
    await direct?.close();
  }
}

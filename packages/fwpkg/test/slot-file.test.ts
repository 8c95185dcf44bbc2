import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { constants, mkdtempSync, readFileSync, realpathSync, rmSync, statfsSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, describe, it } from 'node:test';
import {
  directWritesIn,
  ParallelSha256,
  SlotFile,
  type DirectOpener,
  type DirectWriteFallback,
  type SlotHandle,
} from '../src/index.js';
import { SLOT_BYTES } from '../src/slot-hashers.js';
import { chunked, sha256 } from './helpers.js';
import { openDescriptors } from '../../../test/harness/open-files.js';

/** The open-file flags (from /proc) of this process's descriptors on `path`. */
const openFlags = (path: string) =>
  openDescriptors()
    .filter((d) => d.target === path)
    .map((d) => parseInt(/^flags:\s+(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${d.fd}`, 'utf8'))![1]!, 8));

/** Which handle took each write: a direct handle that records, and writes through an ordinary one of its own. */
function recordingOpener(log: string[], fail?: NodeJS.ErrnoException): DirectOpener {
  return async (buffered) => {
    const own = await open(`/proc/self/fd/${buffered.fd}`, 'r+');
    const handle: SlotHandle = {
      write: async (buffer, offset, length, position) => {
        log.push(`direct ${position}+${length}`);
        if (fail) throw fail;
        return own.write(buffer, offset, length, position);
      },
      close: async () => {
        log.push('direct closed');
        await own.close();
      },
    };
    return handle;
  };
}

/** Records the caller's handle's writes and datasyncs in the same log. */
function recorded(handle: FileHandle, log: string[]): FileHandle {
  const write = handle.write.bind(handle) as (...a: unknown[]) => Promise<{ bytesWritten: number }>;
  const datasync = handle.datasync.bind(handle);
  Object.assign(handle, {
    write: (buffer: Uint8Array, offset: number, length: number, position: number) => {
      log.push(`cached ${position}+${length}`);
      return write(buffer, offset, length, position);
    },
    datasync: () => {
      log.push('datasync');
      return datasync();
    },
  });
  return handle;
}

/** Page-aligned memory, as the slots are. */
const alignedMemory = (bytes: number) =>
  new Uint8Array(
    new (
      globalThis as unknown as { WebAssembly: { Memory: new (d: object) => { buffer: ArrayBuffer } } }
    ).WebAssembly.Memory({ initial: Math.ceil(bytes / 65_536), maximum: Math.ceil(bytes / 65_536), shared: true })
      .buffer,
    0,
    bytes,
  );

/** ext2/3/4, XFS, btrfs: where openDirect must give a direct handle (its own list, written again here). */
const localBlockFileSystem = (dir: string) => [0xef53, 0x58465342, 0x9123683e].includes(statfsSync(dir).type >>> 0);

describe('SlotFile: slots written around the page cache where aligned', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'slot-file-')));
  /** A size aligned to this file system's blocks (SlotFile aligns to max(4096, st_blksize)). */
  const B = Math.max(8192, statSync(dir).blksize);
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const path = () => join(dir, `file-${n++}`);

  it('on this machine: whole slots through an O_DIRECT descriptor, every byte in place', async (t) => {
    const target = path();
    // Three whole slots and a tail that is not a multiple of the block size.
    const bytes = randomBytes(3 * SLOT_BYTES + 12_345);
    const handle = await open(target, 'w');
    const file = await SlotFile.over(handle);
    try {
      if (!localBlockFileSystem(dir)) return t.skip(`${dir} is not on a local block file system: no O_DIRECT here`);
      assert.equal(file.bypassesCache, true, 'a local block file system: a direct handle');
      assert.ok(
        openFlags(target).some((f) => (f & constants.O_DIRECT) !== 0),
        'one descriptor on the file is opened with O_DIRECT',
      );
      let writes = Promise.resolve();
      // One write at a time, as the hub and the satellite chain them.
      const slots = new ParallelSha256((view, at) => (writes = writes.then(() => file.write(view, at))));
      await pipeline(chunked(bytes, 65_536), slots);
      assert.equal((await slots.result).sha256, sha256(bytes));
      assert.equal(file.bypassesCache, true, 'slot memory is page-aligned: no write fell back');
    } finally {
      await file.close();
      await handle.close();
    }
    assert.deepEqual(readFileSync(target), bytes, 'every byte on disk, in place');
    assert.deepEqual(openFlags(target), [], 'both descriptors closed');
  });

  it('aligned writes go to the direct handle, the rest to the caller’s, cached bytes flushed first', async () => {
    const target = path();
    const log: string[] = [];
    const handle = recorded(await open(target, 'w'), log);
    const file = await SlotFile.over(handle, recordingOpener(log));
    const memory = alignedMemory(4 * B);
    memory.set(randomBytes(memory.length));
    try {
      await file.write(memory.subarray(100, B), 100); // a resume's rest of a block: unaligned offset and memory
      await file.write(memory.subarray(B, 2 * B), B); // aligned: after a datasync of the cached bytes
      await file.write(memory.subarray(2 * B, 3 * B), 2 * B); // aligned, nothing cached since
      await file.write(memory.subarray(3 * B, 3 * B + 10), 3 * B); // the tail: unaligned length
    } finally {
      await file.close();
      await handle.close();
    }
    assert.deepEqual(log, [
      `cached 100+${B - 100}`,
      'datasync',
      `direct ${B}+${B}`,
      `direct ${2 * B}+${B}`,
      `cached ${3 * B}+10`,
      'direct closed',
    ]);
    const written = readFileSync(target);
    assert.deepEqual(written.subarray(100), Buffer.from(memory.subarray(100, 3 * B + 10)));
  });

  it('flushes what the file held before its first direct write: a resume’s prefix may be cached', async () => {
    const target = path();
    const log: string[] = [];
    const earlier = await open(target, 'w');
    await earlier.write(randomBytes(B), 0, B, 0); // an earlier attempt, through the cache, never flushed
    await earlier.close();
    const handle = recorded(await open(target, 'r+'), log);
    const file = await SlotFile.over(handle, recordingOpener(log));
    try {
      await file.write(alignedMemory(B), B);
    } finally {
      await file.close();
      await handle.close();
    }
    assert.deepEqual(log, ['datasync', `direct ${B}+${B}`, 'direct closed']);
  });

  it('falls back to the caller’s handle for good when the kernel refuses a direct write (EINVAL)', async () => {
    const target = path();
    const log: string[] = [];
    const handle = recorded(await open(target, 'w'), log);
    const einval = Object.assign(new Error('EINVAL: invalid argument, write'), { code: 'EINVAL' });
    const fallbacks: DirectWriteFallback[] = [];
    const file = await SlotFile.over(handle, recordingOpener(log, einval), (f) => fallbacks.push(f));
    const memory = alignedMemory(2 * B);
    memory.set(randomBytes(memory.length));
    try {
      await file.write(memory.subarray(0, B), 0);
      assert.equal(file.bypassesCache, false);
      await file.write(memory.subarray(B), B);
    } finally {
      await file.close();
      await handle.close();
    }
    assert.deepEqual(log, [`direct 0+${B}`, 'direct closed', `cached 0+${B}`, `cached ${B}+${B}`]);
    // Heard once, with the kernel's error: the file stays on the page cache from then on.
    assert.deepEqual(fallbacks, [{ reason: 'write_refused', error: einval }]);
    assert.deepEqual(readFileSync(target), Buffer.from(memory));
  });

  it('a listener that throws does not fail the write it hears of', async () => {
    const target = path();
    const log: string[] = [];
    const handle = await open(target, 'w');
    const einval = Object.assign(new Error('EINVAL: invalid argument, write'), { code: 'EINVAL' });
    const file = await SlotFile.over(handle, recordingOpener(log, einval), () => {
      throw new Error('a metric that is broken');
    });
    const memory = alignedMemory(B);
    memory.set(randomBytes(B));
    try {
      await file.write(memory, 0);
    } finally {
      await file.close();
      await handle.close();
    }
    assert.deepEqual(log, [`direct 0+${B}`, 'direct closed']);
    assert.deepEqual(readFileSync(target), Buffer.from(memory));
  });

  it('fails a write the direct handle fails otherwise (a full disk), and keeps the direct handle', async () => {
    const target = path();
    const log: string[] = [];
    const handle = await open(target, 'w');
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const fallbacks: DirectWriteFallback[] = [];
    const file = await SlotFile.over(handle, recordingOpener(log, full), (f) => fallbacks.push(f));
    try {
      await assert.rejects(file.write(alignedMemory(B), 0), /ENOSPC/);
      assert.equal(file.bypassesCache, true);
    } finally {
      await file.close();
      await handle.close();
    }
    // A failed write is the caller's failure, not a way back to the page cache.
    assert.deepEqual(fallbacks, []);
  });

  it('says which way a folder is written, one not made yet by the nearest above it, /proc not', async () => {
    assert.equal(await directWritesIn(dir), localBlockFileSystem(dir));
    assert.equal(await directWritesIn(join(dir, 'not', 'made', 'yet')), localBlockFileSystem(dir));
    assert.equal(await directWritesIn('/proc/self'), false);
  });

  it('writes through the caller’s handle alone where there is no direct handle or opening one fails', async () => {
    const emfile = new Error('EMFILE');
    const openers: [DirectOpener, DirectWriteFallback[]][] = [
      // A file system without O_DIRECT: the expected way, nothing to hear of.
      [async () => undefined, []],
      [() => Promise.reject(emfile), [{ reason: 'open_failed', error: emfile }]],
    ];
    for (const [opener, expected] of openers) {
      const target = path();
      const handle = await open(target, 'w');
      const fallbacks: DirectWriteFallback[] = [];
      const file = await SlotFile.over(handle, opener, (f) => fallbacks.push(f));
      try {
        assert.equal(file.bypassesCache, false);
        const bytes = alignedMemory(SLOT_BYTES);
        bytes.set(randomBytes(SLOT_BYTES));
        await file.write(bytes, 0);
        assert.deepEqual(readFileSync(target), Buffer.from(bytes));
      } finally {
        await file.close();
        await handle.close();
      }
      assert.deepEqual(fallbacks, expected);
    }
  });
});

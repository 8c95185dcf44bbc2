import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readlinkSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, describe, it } from 'node:test';
import { ParallelSha256, SlotFile } from '../src/index.js';
import { SLOT_BYTES } from '../src/slot-hashers.js';
import { chunked, sha256 } from './helpers.js';

/** The open-file flags (octal, from /proc) of this process's descriptors on `path`. */
function openFlags(path: string): number[] {
  const flags: number[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed while listing (readdir's own descriptor)
    }
    if (target !== path) continue;
    const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    flags.push(parseInt(/^flags:\s+(\d+)/m.exec(info)![1]!, 8));
  }
  return flags;
}

const O_DIRECT = 0o40000;

describe('SlotFile: slots written around the page cache where aligned', () => {
  const dir = mkdtempSync(join(tmpdir(), 'slot-file-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const path = () => join(dir, `file-${n++}`);

  it('streams slots to disk through an O_DIRECT handle, the last unaligned slot through the caller’s', async () => {
    const target = path();
    // Three whole slots and a tail that is not a multiple of the block size.
    const bytes = randomBytes(3 * SLOT_BYTES + 12_345);
    const handle = await open(target, 'w');
    const file = await SlotFile.over(target, handle);
    try {
      assert.equal(file.bypassesCache, true, 'the file system here (ext4, tmpfs) takes O_DIRECT');
      assert.ok(
        openFlags(target).some((f) => (f & O_DIRECT) !== 0),
        'one descriptor on the file is opened with O_DIRECT',
      );
      const slots = new ParallelSha256((view, at) => file.write(view, at));
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

  it('writes unaligned offsets, lengths and memory through the caller’s handle', async () => {
    const target = path();
    const handle = await open(target, 'w');
    const file = await SlotFile.over(target, handle);
    try {
      const slab = randomBytes(3 * 4096 + 100);
      await file.write(slab.subarray(0, 4096 + 10), 0); // unaligned length
      await file.write(slab.subarray(4096 + 10, 3 * 4096), 4096 + 10); // unaligned offset and memory
      await file.write(slab.subarray(3 * 4096), 3 * 4096); // the tail
      await handle.sync();
      assert.deepEqual(readFileSync(target), slab);
    } finally {
      await file.close();
      await handle.close();
    }
  });

  it('falls back to the caller’s handle for good when the memory is not aligned (EINVAL), losing nothing', async () => {
    // A Buffer's memory comes from malloc, 16 bytes past a page boundary most of the time; the kernel then refuses
    // O_DIRECT. Now and then malloc hands out an aligned one, so a few tries.
    let fellBack = 0;
    for (let attempt = 0; attempt < 5 && fellBack === 0; attempt++) {
      const target = path();
      const handle = await open(target, 'w');
      const file = await SlotFile.over(target, handle);
      try {
        const bytes = Buffer.allocUnsafeSlow(2 * 4096);
        bytes.set(randomBytes(bytes.length));
        await file.write(bytes.subarray(0, 4096), 0);
        await file.write(bytes.subarray(4096), 4096);
        assert.deepEqual(readFileSync(target), bytes);
        if (!file.bypassesCache) {
          fellBack++;
          assert.ok(
            openFlags(target).every((f) => (f & O_DIRECT) === 0),
            'the O_DIRECT descriptor is closed',
          );
        }
      } finally {
        await file.close();
        await handle.close();
      }
    }
    assert.equal(fellBack, 1, 'a write from unaligned memory fell back');
  });

  it('writes through the caller’s handle alone where the file cannot be opened again', async () => {
    const target = path();
    const handle = await open(target, 'w');
    const moved = `${target}.moved`;
    renameSync(target, moved); // the caller's handle follows the file; a second open of the old name fails
    const file = await SlotFile.over(target, handle).catch((err: unknown) => err);
    try {
      assert.ok(file instanceof SlotFile, `no error: ${String(file)}`);
      assert.equal(file.bypassesCache, false);
      const bytes = randomBytes(SLOT_BYTES);
      await file.write(bytes, 0);
      assert.deepEqual(readFileSync(moved), bytes);
    } finally {
      if (file instanceof SlotFile) await file.close();
      await handle.close();
    }
  });
});

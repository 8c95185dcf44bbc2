import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Spool, SpoolError } from '../src/spool.js';

interface Obj {
  id: number;
  last_updated: string;
  name: string;
}

const obj = (id: number, name = `o${id}`): Obj => ({ id, name, last_updated: `2026-01-01T00:00:${id}Z` });

describe('the spool a NetBox pass reads into', () => {
  let parent: string;
  before(async () => (parent = await mkdtemp(join(tmpdir(), 'fleet-spool-unit-'))));
  after(() => rm(parent, { recursive: true, force: true }));

  const collect = async (it: AsyncIterable<Obj[]>) => {
    const out: Obj[][] = [];
    for await (const batch of it) out.push(batch);
    return out;
  };

  it(`gives the objects back in the order they came, in batches that cross page boundaries, as often as asked; ids \
and the newest last_updated stay in memory`, async () => {
    const spool = await Spool.create<'device', Obj>(parent);
    try {
      const devices = spool.kind('device');
      await devices.add([obj(3), obj(1)]);
      await devices.add([]);
      await devices.add([obj(9, 'a\nb\u2028c\u0000d "e"'), obj(2), obj(5)]);
      assert.deepEqual(devices.ids, [3, 1, 9, 2, 5]);
      assert.equal(devices.count, 5);
      assert.equal(devices.watermark, obj(9).last_updated);
      const batches = await collect(devices.batches(2));
      assert.deepEqual(
        batches.map((b) => b.map((o) => o.id)),
        [[3, 1], [9, 2], [5]],
      );
      assert.equal(batches[1]![0]!.name, 'a\nb\u2028c\u0000d "e"');
      assert.deepEqual(await collect(devices.batches(2)), batches, 'read again (a retried transaction)');
      assert.equal(spool.kind('device'), devices, 'one spool per kind');
    } finally {
      await spool.close();
    }
  });

  it('a kind that read nothing has no file and yields nothing', async () => {
    const spool = await Spool.create<'ip', Obj>(parent);
    try {
      assert.deepEqual(await collect(spool.kind('ip').batches(10)), []);
      assert.equal(spool.kind('ip').watermark, '');
      const [dir] = await readdir(parent);
      assert.deepEqual(await readdir(join(parent, dir!)), []);
    } finally {
      await spool.close();
    }
  });

  it('close removes the directory, also after a reader stopped early', async () => {
    const spool = await Spool.create<'rack', Obj>(parent);
    const racks = spool.kind('rack');
    for (let i = 0; i < 10; i++) await racks.add([obj(i)]);
    const [dir] = await readdir(parent);
    for await (const batch of racks.batches(3)) {
      assert.equal(batch.length, 3);
      break;
    }
    await spool.close();
    assert.equal(existsSync(join(parent, dir!)), false);
    assert.deepEqual(await readdir(parent), []);
  });

  it(`at start-up, the directories of agents no longer running (and this process's own) are removed, a live \
agent's kept; a directory that is missing or not writable is a SpoolError naming it`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-spool-prepare-'));
    try {
      const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
      const names = [gone, process.pid, process.ppid].map((pid) => `fleet-netbox-pass-${pid}-abc123`);
      for (const name of names) {
        await mkdir(join(dir, name));
        await writeFile(join(dir, name, 'device.json'), '[]');
      }
      await mkdir(join(dir, 'unrelated'));
      assert.deepEqual((await Spool.prepare(dir)).sort(), names.slice(0, 2).sort());
      assert.deepEqual((await readdir(dir)).sort(), [names[2], 'unrelated'].sort());

      await assert.rejects(Spool.prepare(join(dir, 'missing')), (err: Error) => {
        assert.ok(err instanceof SpoolError);
        assert.match(err.message, /spool .*missing: clear: ENOENT/);
        return true;
      });
      await writeFile(join(dir, 'file'), '');
      await assert.rejects(Spool.prepare(join(dir, 'file')), /spool .*file: clear: ENOTDIR/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

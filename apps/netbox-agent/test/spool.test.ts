import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Spool } from '../src/spool.js';

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
});

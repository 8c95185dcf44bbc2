import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { hashBacklog, OffThreadHash } from '../src/nvos/hash-worker.js';
import { VirtualFs } from '../src/nvos/vfs.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** `data` written in pieces of `size` bytes at their offsets. */
function writeInPieces(write: (offset: number, piece: Buffer) => void, data: Buffer, size: number): void {
  for (let at = 0; at < data.length; at += size) write(at, data.subarray(at, at + size));
}

describe('NVOS simulator: upload hashing off the event loop', () => {
  it('digests writes of any size across block boundaries, two uploads at once kept apart', async () => {
    const a = randomBytes(3 * 1024 * 1024 + 4321);
    const b = randomBytes(1024 * 1024);
    const ha = new OffThreadHash();
    const hb = new OffThreadHash();
    // Interleaved, as two sessions' writes arrive at one simulator.
    writeInPieces((o, p) => (ha.update(p), o === 0 && hb.update(b.subarray(0, 1000))), a, 100_003);
    hb.update(b.subarray(1000));
    const [da, db] = await Promise.all([ha.digest(), hb.digest()]);
    assert.equal(da, sha256(a));
    assert.equal(db, sha256(b));
    assert.equal(await new OffThreadHash().digest(), sha256(Buffer.alloc(0)), 'an empty file');
    assert.equal(hashBacklog(), 0, 'every block came back');
  });

  it('sets a file digest on close, out-of-order writes included; a rewrite or a hole leaves none', async () => {
    const fs = new VirtualFs();
    const data = randomBytes(2 * 1024 * 1024 + 17);
    const f = fs.openForWrite('/host/nos-images/a.bin')!;
    // The second half first: held until the first half fills the gap.
    const half = 1024 * 1024;
    writeInPieces((o, p) => assert.ok(f.write(half + o, p)), data.subarray(half), 65_536);
    writeInPieces((o, p) => assert.ok(f.write(o, p)), data.subarray(0, half), 65_536);
    await f.close();
    assert.equal(f.sha256, sha256(data));

    const g = fs.openForWrite('/host/nos-images/b.bin')!;
    g.write(0, data.subarray(0, 1000));
    g.write(500, data.subarray(500, 1000));
    await g.close();
    assert.equal(g.sha256, undefined, 'bytes written twice');

    const h = fs.openForWrite('/host/nos-images/c.bin')!;
    h.write(1000, data.subarray(1000, 2000));
    await h.close();
    assert.equal(h.sha256, undefined, 'a hole at the start');
  });

  it('never gives a digest to newer content: a file reopened before the old digest arrived', async () => {
    const fs = new VirtualFs();
    const first = randomBytes(3 * 1024 * 1024);
    const second = randomBytes(1234);
    const f = fs.openForWrite('/host/nos-images/a.bin')!;
    f.write(0, first);
    const closing = f.close();
    assert.equal(fs.openForWrite('/host/nos-images/a.bin'), f);
    await closing;
    assert.equal(f.sha256, undefined, 'the first upload is gone');
    f.write(0, second);
    await f.close();
    assert.equal(f.sha256, sha256(second));
    assert.equal(fs.put('/host/nos-images/d.bin', second).sha256, sha256(second), 'put hashes in place');
  });
});

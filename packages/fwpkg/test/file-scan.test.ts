import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pipeline } from 'node:stream/promises';
import {
  buildFwpkg,
  crc32,
  FwpkgError,
  inspectFwpkg,
  inspectFwpkgFile,
  ParallelFwpkgInspector,
  ParallelSha256,
  parseFwpkgHeader,
  type SlotForward,
} from '../src/index.js';
import { SLOT_BYTES as FILE_CHUNK } from '../src/slot-hashers.js';
import { chunked, reseal, sampleSpec, sha256, vectors } from './helpers.js';

/** Forces the worker-thread file path whatever the size. */
const parallel = { parallelFromBytes: 0 };

/** The parallel stream inspector over `bytes` in `size`-byte chunks; what it forwarded, in order. */
async function streamedInParallel(bytes: Uint8Array, size = 65_536, forward?: SlotForward) {
  const forwarded: Buffer[] = [];
  const inspector = new ParallelFwpkgInspector(async (view, at) => {
    assert.equal(
      at,
      forwarded.reduce((n, b) => n + b.length, 0),
      'slots arrive in order, at their offsets',
    );
    forwarded.push(Buffer.from(view));
    await forward?.(view, at);
  });
  await pipeline(chunked(bytes, size), inspector);
  const result = await inspector.result;
  assert.deepEqual(Buffer.concat(forwarded), Buffer.from(bytes), 'forward saw every byte once, in order');
  return result;
}

describe('large-file inspection on worker threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fwpkg-scan-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const file = (bytes: Uint8Array) => {
    const path = join(dir, `pkg-${n++}.fwpkg`);
    writeFileSync(path, bytes);
    return path;
  };
  /** The error (or result) of the streamed inspection and of the worker-thread one. */
  const both = async (bytes: Uint8Array) => {
    const settle = (p: Promise<unknown>) => p.catch((err: unknown) => err);
    const streamed = await settle(inspectFwpkg(chunked(bytes, 4096)));
    const scanned = await settle(inspectFwpkgFile(file(bytes), parallel));
    // The parallel stream inspector agrees with both, errors included.
    const parallelStreamed = await settle(streamedInParallel(bytes));
    assert.deepEqual(parallelStreamed, scanned);
    if (scanned instanceof FwpkgError) assert.equal((parallelStreamed as Error).message, scanned.message);
    return [streamed, scanned];
  };

  it('crc32 is CRC-32/IEEE, and continues across pieces', () => {
    const check = Buffer.from('123456789');
    assert.equal(crc32(check), 0xcbf43926);
    assert.equal(crc32(check.subarray(4), crc32(check.subarray(0, 4))), 0xcbf43926);
    assert.equal(crc32(new Uint8Array(0), 0x1234), 0x1234);
  });

  for (const revision of ['1.0', '1.1', '1.2', '1.3'] as const) {
    it(`DSP0267 ${revision}: the same inspection as the stream`, async () => {
      const [streamed, scanned] = await both(buildFwpkg(sampleSpec(revision)));
      assert.ok(!(streamed instanceof Error), String(streamed));
      assert.deepEqual(scanned, streamed);
    });
  }

  for (const name of ['pkg-1.0.0.fwpkg', 'pkg-1.3.0.fwpkg']) {
    it(`${name}: the same inspection as the stream`, async () => {
      const path = join(vectors, name);
      assert.deepEqual(await inspectFwpkgFile(path, parallel), await inspectFwpkg(chunked(readFileSync(path), 1000)));
    });
  }

  it('images across chunk boundaries, more chunks than buffers, an empty image', async () => {
    const sizes = [FILE_CHUNK - 100, 2 * FILE_CHUNK + 333, 0, 3 * FILE_CHUNK + 7, 5 * FILE_CHUNK + 1];
    const images = sizes.map((size, i) => Buffer.alloc(size, i + 1).fill(0xa5, 0, Math.min(size, 10)));
    const pkg = buildFwpkg({
      ...sampleSpec('1.3'),
      components: images.map((data, i) => ({ classification: 1, identifier: i, version: `v${i}`, image: { data } })),
    });
    assert.ok(pkg.length > 10 * FILE_CHUNK);
    const result = await inspectFwpkgFile(file(pkg), parallel);
    assert.equal(result.size, pkg.length);
    assert.equal(result.sha256, sha256(pkg));
    assert.deepEqual(result.componentSha256, images.map(sha256));
    assert.deepEqual(result.header, parseFwpkgHeader(pkg));
    // Streamed in odd-sized chunks that straddle the slots: the same result.
    assert.deepEqual(await streamedInParallel(pkg, 3 * 1024 * 1024 + 17), result);
  });

  it('the parallel stream fails with its forward; destroyed, its result rejects with the reason', async () => {
    const pkg = buildFwpkg({
      ...sampleSpec('1.0'),
      components: [3 * FILE_CHUNK, 1, 0].map((size, i) => ({
        classification: 1,
        identifier: i,
        version: `v${i}`,
        image: { size, fill: i + 1 },
      })),
    });
    await assert.rejects(
      streamedInParallel(pkg, 65_536, async (_, at) => {
        if (at > 0) throw new Error('disk full');
      }),
      /disk full/,
    );
    const destroyed = new ParallelSha256();
    destroyed.on('error', () => undefined);
    destroyed.write(Buffer.alloc(FILE_CHUNK + 1));
    destroyed.destroy(new Error('client gone'));
    await assert.rejects(destroyed.result, /client gone/);

    const digest = new ParallelSha256();
    await pipeline(chunked(pkg, 100_000), digest);
    assert.deepEqual(await digest.result, { sha256: sha256(pkg), size: pkg.length });
  });

  it('overlapping images are each hashed whole', async () => {
    const pkg = buildFwpkg({
      ...sampleSpec('1.0'),
      components: [FILE_CHUNK, FILE_CHUNK, 0].map((size, i) => ({
        classification: 1,
        identifier: i,
        version: `v${i}`,
        image: { size, fill: i + 1 },
      })),
    });
    const { components } = parseFwpkgHeader(pkg);
    // The second image starts half-way into the first.
    const second = components[1]!.recordOffset + 12;
    const start = components[0]!.locationOffset + FILE_CHUNK / 2;
    pkg.writeUInt32LE(start, second);
    reseal(pkg);
    const [streamed, scanned] = await both(pkg);
    assert.deepEqual(scanned, streamed);
    assert.deepEqual(
      (scanned as { componentSha256: string[] }).componentSha256[1],
      sha256(pkg.subarray(start, start + FILE_CHUNK)),
    );
  });

  it('fails as the stream does: header, payload checksum, images past the end, truncation', async () => {
    const pkg = buildFwpkg(sampleSpec('1.3'));
    const headerSize = pkg.readUInt16LE(17);
    const corruptHeader = Buffer.from(pkg);
    corruptHeader[40]! ^= 0xff;
    const corruptPayload = Buffer.from(pkg);
    corruptPayload[headerSize + 5]! ^= 0x01;
    const cases: [string, Uint8Array, string, string][] = [
      ['header byte flipped', corruptHeader, 'checksum_mismatch', 'PackageHeaderChecksum'],
      ['payload byte flipped', corruptPayload, 'checksum_mismatch', 'PackagePayloadChecksum'],
      ['last image cut short', pkg.subarray(0, pkg.length - 1), 'out_of_bounds', 'ComponentSize'],
      ['cut inside the header', pkg.subarray(0, headerSize - 1), 'truncated', 'PackageHeaderSize'],
      ['cut inside the identifier', pkg.subarray(0, 10), 'truncated', 'PackageHeaderIdentifier'],
      ['empty', new Uint8Array(0), 'truncated', 'PackageHeaderIdentifier'],
    ];
    for (const [what, bytes, code, field] of cases) {
      const [streamed, scanned] = await both(bytes);
      assert.ok(scanned instanceof FwpkgError, `${what}: ${String(scanned)}`);
      assert.deepEqual([scanned.code, scanned.field], [code, field], what);
      assert.deepEqual(
        [scanned.message, scanned.offset, scanned.needBytes],
        [(streamed as FwpkgError).message, (streamed as FwpkgError).offset, (streamed as FwpkgError).needBytes],
        what,
      );
    }
  });

  it('small files take the stream path unless told otherwise, with the same result', async () => {
    const path = file(buildFwpkg(sampleSpec('1.2')));
    assert.deepEqual(await inspectFwpkgFile(path), await inspectFwpkgFile(path, parallel));
    await assert.rejects(inspectFwpkgFile(join(dir, 'missing.fwpkg')), { code: 'ENOENT' });
  });
});

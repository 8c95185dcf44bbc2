import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { buildFwpkg, PARALLEL_FILE_BYTES, type DirectOpener, type DirectWriteFallback } from '@fleet/fwpkg';
import { FileBlobStore } from '../src/firmware/blob-store.js';
import { checkDeclaredSize, receiveNvosImage, receivePackage } from '../src/firmware/package-upload.js';
import { openFilesUnder } from '../../../test/harness/open-files.js';
import { refusingDisk } from '../../../test/harness/direct-writes.js';

// The large-upload path (hashing on worker threads from shared-memory slots that are also what gets written)
// against the in-thread one, on the same bytes: the same package, the same stored blob, the same failures.

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const large = PARALLEL_FILE_BYTES + 5 * 1024 * 1024 + 3;
const pkg = buildFwpkg({
  revision: '1.3',
  packageVersion: '7.1.0',
  devices: [{ descriptors: [], applicableComponents: [0, 1], imageSetVersion: 'set-7.1.0' }],
  components: [
    { classification: 10, identifier: 1, version: 'bmc-7.1.0', image: { size: large, fill: 0x3c } },
    { classification: 10, identifier: 2, version: 'hmc-7.1.0', image: { data: Buffer.from('hmc image') } },
  ],
});
/** A client's body in socket-sized pieces. */
const body = (bytes: Uint8Array, piece = 65_536) =>
  Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; at += piece) yield bytes.subarray(at, at + piece);
    })(),
  );

describe('package upload on worker threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-upload-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const store = () => new FileBlobStore(join(dir, `blobs-${n++}`));
  const files = async (blobs: FileBlobStore) =>
    (await readdir(blobs.dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
  const limits = (declared: number | undefined, max = 2 * pkg.length) =>
    checkDeclaredSize(declared === undefined ? undefined : String(declared), max);

  it('from PARALLEL_FILE_BYTES of declared size on: the result and the blob equal the in-thread path', async () => {
    assert.ok(pkg.length >= PARALLEL_FILE_BYTES);
    assert.deepEqual(limits(pkg.length), { maxBytes: 2 * pkg.length, declaredBytes: pkg.length });
    const [inThread, parallel] = [store(), store()];
    const expected = await receivePackage(body(pkg), inThread, limits(undefined));
    const received = await receivePackage(body(pkg, 100_003), parallel, limits(pkg.length));
    assert.deepEqual(received, expected);
    assert.equal(received.digest, sha256(pkg));
    assert.equal(received.packageVersion, '7.1.0');
    assert.equal(sha256(await readFile(parallel.pathOf(received.digest))), received.digest);
    assert.deepEqual(await files(parallel), [received.digest]);

    const image = await receiveNvosImage(body(pkg), store(), limits(pkg.length), 'nvos-25.02.1');
    assert.deepEqual([image.digest, image.size], [sha256(pkg), pkg.length]);
    assert.deepEqual(openFilesUnder(dir), [], 'every handle closed, the O_DIRECT ones included');
  });

  it('fails as the in-thread path does, and stores nothing: a corrupt header, a cut body, over the limit', async () => {
    const corrupt = Buffer.from(pkg);
    corrupt[40]! ^= 0xff;
    const cut = pkg.subarray(0, pkg.length - 1000);
    const cases: [string, () => Readable, number, RegExp][] = [
      ['corrupt header', () => body(corrupt), pkg.length * 2, /PackageHeaderChecksum/],
      ['cut body', () => body(cut), pkg.length * 2, /ComponentSize/],
      ['over the limit while streaming', () => body(pkg), pkg.length - 1, /firmware\.maxPackageBytes/],
    ];
    for (const [what, source, max, message] of cases) {
      const blobs = store();
      const failures = [];
      for (const declared of [undefined, pkg.length])
        failures.push(
          await receivePackage(source(), blobs, { maxBytes: max, declaredBytes: declared }).catch((e) => e),
        );
      for (const err of failures) assert.match(String((err as Error).message), message, what);
      assert.deepEqual(
        failures.map((e) => (e as Error).message),
        [failures[0].message, failures[0].message],
        `${what}: the same error both ways`,
      );
      assert.deepEqual(await files(blobs), [], `${what}: nothing stored`);
      assert.deepEqual(openFilesUnder(blobs.dir), [], `${what}: every handle closed`);
    }
  });

  it('a disk that refuses direct writes (EINVAL): the upload goes on through the page cache, and says so', async () => {
    const { open: refusing, refusals, error: einval } = refusingDisk();
    const fallbacks: (DirectWriteFallback & { path: string })[] = [];
    const blobs = new FileBlobStore(join(dir, 'refusing'), {
      openDirect: refusing,
      onDirectFallback: (f) => fallbacks.push(f),
    });
    const received = await receivePackage(body(pkg), blobs, limits(pkg.length));
    assert.equal(sha256(await readFile(blobs.pathOf(received.digest))), sha256(pkg));
    assert.deepEqual(refusals, [0], 'asked once: every slot after the refusal went through the page cache');
    assert.deepEqual(
      fallbacks.map((f) => [f.reason, f.error, dirname(f.path)]),
      [['write_refused', einval, join(blobs.dir, 'tmp')]],
    );
  });

  it(
    'a slot write that fails (a full disk) fails the upload at once: nothing written after it, nothing left',
    {
      timeout: 30_000, // a failure that waits for the stalled client never comes
    },
    async () => {
      const writes: number[] = [];
      const fullDisk: DirectOpener = async (buffered) => {
        const own = await open(`/proc/self/fd/${buffered.fd}`, 'r+');
        return {
          write: async (buffer, offset, length, position) => {
            writes.push(position);
            if (writes.length > 2)
              throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
            return own.write(buffer, offset, length, position);
          },
          close: () => own.close(),
        };
      };
      const blobs = new FileBlobStore(join(dir, 'full'), { openDirect: fullDisk });
      // A client that sends five slots' worth and then stalls: the failure must not wait for its next bytes.
      const slot = 4 * 1024 * 1024;
      const stalled = Readable.from(
        (async function* () {
          yield* body(pkg.subarray(0, 5 * slot));
          await new Promise(() => undefined);
        })(),
      );
      await assert.rejects(receivePackage(stalled, blobs, limits(pkg.length)), /ENOSPC/);
      assert.deepEqual(writes, [0, slot, 2 * slot], 'no slot written after the failed one');
      assert.deepEqual(await files(blobs), [], 'the temp file is gone');
      assert.deepEqual(openFilesUnder(blobs.dir), [], 'every handle closed');
    },
  );
});

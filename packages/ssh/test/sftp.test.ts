import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NvosSimulator } from '@fleet/simulators';
import { SftpStallError, SshError, type SshSession } from '../src/index.js';
import { open, startSim } from './helpers.js';

const IMAGE = 'nvos-amd64-25.02.5000.bin';
const REMOTE = `/host/nos-images/${IMAGE}`;

describe('SFTP uploads to the NVOS simulator', () => {
  let sim: NvosSimulator;
  let s: SshSession;
  let dir: string;
  let image: Buffer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sftp-'));
    image = randomBytes(8 * 1024 * 1024 + 17);
    writeFileSync(join(dir, IMAGE), image);
    sim = await startSim([{ id: 'sw1' }]);
    s = await open(sim, 'sw1');
  });
  after(async () => {
    s.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const remote = (path: string) => sim.switch('sw1').fs.file(path);

  it('streams a file with progress, and the switch holds exactly its bytes', async () => {
    const progress: number[] = [];
    const result = await s.upload(join(dir, IMAGE), REMOTE, {
      onProgress: (bytes, total) => (assert.equal(total, image.length), progress.push(bytes)),
    });
    assert.deepEqual(result, { remotePath: REMOTE, bytes: image.length, uploaded: true });
    assert.ok(progress.length > 10);
    assert.ok(
      progress.every((b, i) => i === 0 || b > progress[i - 1]!),
      'progress only grows',
    );
    assert.equal(progress.at(-1), image.length);
    assert.equal(remote(REMOTE)?.sha256, createHash('sha256').update(image).digest('hex'));
    assert.equal(await s.stat(REMOTE), image.length);
    assert.equal(await s.stat('/host/nos-images/absent.bin'), undefined);
    assert.deepEqual(await s.list('/host/nos-images'), [{ name: IMAGE, size: image.length, isDirectory: false }]);
  });

  it('writes any size up to the server limit, few or many in flight, and uploads empty files', async () => {
    const digest = createHash('sha256').update(image).digest('hex');
    // The simulator states no write limit, so 32 KiB is the most; by default a write fills one SSH packet.
    const onePacket = 32 * 1024 - 29;
    for (const [chunkSize, concurrency, writeSize] of [
      [100_000, 1, 32 * 1024],
      [30_001, 3, 30_001],
      [4096, 200, 4096],
      [undefined, undefined, onePacket],
    ] as const) {
      const path = `/host/nos-images/chunks-${chunkSize}.bin`;
      const seen: number[] = [];
      await s.upload(join(dir, IMAGE), path, {
        ...(chunkSize ? { chunkSize, concurrency } : {}),
        onProgress: (b) => seen.push(b),
      });
      assert.equal(remote(path)?.sha256, digest, `${chunkSize} × ${concurrency}`);
      assert.equal(seen.length, Math.ceil(image.length / writeSize), 'one progress report per acknowledged write');
    }
    writeFileSync(join(dir, 'empty.bin'), '');
    assert.equal((await s.upload(join(dir, 'empty.bin'), '/host/nos-images/empty.bin')).bytes, 0);
    assert.equal(remote('/host/nos-images/empty.bin')?.sha256, createHash('sha256').digest('hex'));
  });

  it('skips the upload when the switch already has a file of the same size', async () => {
    const uploads = remote(REMOTE)!.uploads;
    assert.deepEqual(await s.uploadIfDifferent(join(dir, IMAGE), REMOTE), {
      remotePath: REMOTE,
      bytes: image.length,
      uploaded: false,
    });
    assert.equal(remote(REMOTE)!.uploads, uploads);
    sim.switch('sw1').fs.put(REMOTE, Buffer.alloc(100));
    assert.equal((await s.uploadIfDifferent(join(dir, IMAGE), REMOTE)).uploaded, true);
    assert.equal(remote(REMOTE)!.size, image.length);
  });

  it('detects a stalled transfer within the step timeout, and the session uploads again afterwards', async () => {
    sim.switch('sw1').setFaults({ sftpStallAfterBytes: 1024 * 1024 });
    const started = Date.now();
    const e = await s
      .upload(join(dir, IMAGE), '/host/nos-images/stalled.bin', { stepTimeoutMs: 300 })
      .catch((err: unknown) => err);
    const elapsed = Date.now() - started;
    assert.ok(e instanceof SftpStallError, String(e));
    assert.deepEqual([e.kind, e.remotePath, e.retryable], ['Stall', '/host/nos-images/stalled.bin', true]);
    assert.ok(e.bytes > 0 && e.bytes <= 1024 * 1024, `acknowledged ${e.bytes}`);
    assert.ok(elapsed >= 300 && elapsed < 2_000, `gave up after ${elapsed} ms`);
    sim.switch('sw1').setFaults({});
    assert.equal((await s.upload(join(dir, IMAGE), '/host/nos-images/stalled.bin')).bytes, image.length);
    assert.equal(remote('/host/nos-images/stalled.bin')?.uploads, 2);
  });

  it('gives up at the overall timeout even while progress continues', async () => {
    sim.switch('sw1').setFaults({ sftpStallAfterBytes: 512 * 1024 });
    const e = await s
      .upload(join(dir, IMAGE), '/host/nos-images/slow.bin', { stepTimeoutMs: 10_000, overallTimeoutMs: 200 })
      .catch((err: unknown) => err);
    sim.switch('sw1').setFaults({});
    assert.ok(e instanceof SshError && !(e instanceof SftpStallError), String(e));
    assert.equal(e.kind, 'Timeout');
  });

  it('stops when cancelled, with the caller reason', async () => {
    const ac = new AbortController();
    const p = s.upload(join(dir, IMAGE), '/host/nos-images/cancelled.bin', {
      signal: ac.signal,
      onProgress: () => ac.abort(new Error('job cancelled')),
    });
    await assert.rejects(p, /job cancelled/);
    assert.ok((remote('/host/nos-images/cancelled.bin')?.size ?? 0) < image.length);
    await assert.rejects(
      s.upload(join(dir, IMAGE), '/host/nos-images/x.bin', { signal: AbortSignal.abort(new Error('already')) }),
      /already/,
    );
  });

  it('creates folders, and reports a missing local file or a forbidden place as typed errors', async () => {
    await s.mkdirp('/host/fw-images/bmc');
    await s.upload(join(dir, IMAGE), '/host/fw-images/bmc/nvfw-bmc-88.0002.1400.fwpkg');
    assert.ok(remote('/host/fw-images/bmc/nvfw-bmc-88.0002.1400.fwpkg'));
    const missing = await s.upload(join(dir, 'nope.bin'), '/host/nos-images/nope.bin').catch((err: unknown) => err);
    assert.ok(missing instanceof SshError && missing.kind === 'LocalFile');
    const forbidden = await s.upload(join(dir, IMAGE), '/etc/passwd').catch((err: unknown) => err);
    assert.ok(
      forbidden instanceof SshError && forbidden.kind === 'Sftp' && forbidden.step === 'upload',
      String(forbidden),
    );
  });
});

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, CancelledFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import type { FirmwareActivities } from '@fleet/domain';
import { Registry } from 'prom-client';
import { connectDb, createApiToken, type DbHandle } from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { buildHub } from '../../hub/src/app.js';
import { FileBlobStore } from '../../hub/src/firmware/blob-store.js';
import { createFetchArtifactActivity, type FetchArtifactHeartbeat } from '../src/activities/fetch-artifact.js';
import { ArtifactCache, type ArtifactCacheOptions } from '../src/artifacts/artifact-cache.js';
import { ArtifactFetchError } from '../src/artifacts/artifact-errors.js';
import { refusingDisk } from '../../../test/harness/direct-writes.js';
import { openFilesUnder } from '../../../test/harness/open-files.js';

// The site artifact cache against a real hub (Postgres for its tokens, a temp blob store),
// with a TCP proxy in between that can cut or stall a transfer part-way.
const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';
const MiB = 1024 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const silent = pino({ level: 'silent' });

/**
 * Forwards to the hub; after `cutAfter` bytes towards the client it drops both sockets, after `stallAfter` it stops
 * forwarding.
 */
class FlakyProxy {
  cutAfter = Infinity;
  stallAfter = Infinity;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly target: number) {
    this.server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s)).on('error', () => undefined);
      }
      client.pipe(upstream);
      let sent = 0;
      upstream.on('data', (chunk: Buffer) => {
        const room = Math.min(this.cutAfter, this.stallAfter) - sent;
        if (room > 0) client.write(chunk.subarray(0, room));
        sent += Math.min(chunk.length, Math.max(room, 0));
        if (sent >= this.cutAfter) {
          client.destroy();
          upstream.destroy();
        } else if (sent >= this.stallAfter) upstream.pause();
      });
      upstream.on('end', () => client.end());
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const quiet: Logger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

describe('site artifact cache', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let hub: ReturnType<typeof buildHub>;
  let hubUrl: string;
  let proxy: FlakyProxy;
  let proxyUrl: string;
  let store: FileBlobStore;
  let token: string;
  const dirs: string[] = [];
  const caches: ArtifactCache[] = [];
  /** Blob requests the hub saw: digest and Range header. */
  const requests: { digest: string; range: string | undefined }[] = [];

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 4);
    const blobDir = await mkdtemp(join(tmpdir(), 'fleet-hub-blobs-'));
    dirs.push(blobDir);
    store = new FileBlobStore(blobDir);
    hub = buildHub({
      db: handle.db,
      log: silent,
      registry: new Registry(),
      views: { temporalNamespace: 'default' },
      firmware: { blobs: store, maxPackageBytes: MiB },
    });
    hub.addHook('onRequest', async (request) => {
      const m = /^\/v1\/firmware\/blobs\/(\w+)/.exec(request.url);
      if (m) requests.push({ digest: m[1]!, range: request.headers.range });
    });
    hubUrl = await hub.listen({ host: '127.0.0.1', port: 0 });
    proxy = new FlakyProxy(Number(new URL(hubUrl).port));
    proxyUrl = await proxy.listen();
    token = (await createApiToken(handle.db, 'satellite-lab', 'viewer')).token;
  });
  after(async () => {
    for (const c of caches) await c.close();
    await proxy.close();
    await hub.close();
    await handle.close();
    await database.drop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  /** Stores bytes in the hub's blob store, under their digest unless told otherwise. */
  const putBlob = async (bytes: Buffer, digest = sha256(bytes)) => {
    const upload = await store.beginWrite();
    await new Promise((resolve) => upload.stream.write(bytes, resolve));
    await upload.commit(digest);
    return digest;
  };
  const newCache = async (
    opts: { maxBytes?: number; url?: string; token?: string; parallelHashFromBytes?: number } & Pick<
      ArtifactCacheOptions,
      'openDirect' | 'onDirectFallback'
    > = {},
  ) => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-artifacts-'));
    dirs.push(dir);
    const cache = new ArtifactCache({
      dir,
      maxBytes: opts.maxBytes ?? 1024 * MiB,
      hub: { url: opts.url ?? hubUrl, token: async () => opts.token ?? token },
      log: silent,
      parallelHashFromBytes: opts.parallelHashFromBytes,
      openDirect: opts.openDirect,
      onDirectFallback: opts.onDirectFallback,
    });
    caches.push(cache);
    return { cache, dir };
  };
  const requestsFor = (digest: string) => requests.filter((r) => r.digest === digest);

  // Each transfer case with the blob hashed in this thread (as small blobs are) and on a worker thread (as
  // blobs of PARALLEL_FILE_BYTES and more are), so resume and failure behave the same both ways. The blobs span
  // several 4 MiB slots and end mid-block: on worker threads whole slots go to disk with O_DIRECT, the rest buffered.
  for (const [how, parallelHashFromBytes] of [
    ['hashed in-thread', undefined],
    ['hashed on a worker thread', 0],
  ] as const) {
    it(`${how}: downloads and verifies a blob; a second call is served from disk without a request`, async () => {
      const bytes = randomBytes(9 * MiB + 100);
      const digest = await putBlob(bytes);
      const { cache, dir } = await newCache({ parallelHashFromBytes });
      const progress: number[] = [];
      const path = await cache.ensure(digest, bytes.length, { onProgress: (b) => progress.push(b) });
      assert.equal(path, join(dir, digest));
      assert.equal(sha256(await readFile(path)), digest);
      assert.equal(progress.at(-1), bytes.length);
      assert.deepEqual(requestsFor(digest), [{ digest, range: undefined }]);
      const again = await cache.acquire(digest, bytes.length);
      again.release();
      assert.equal(again.path, path);
      assert.equal(again.fetchedBytes, 0);
      assert.equal(requestsFor(digest).length, 1);
      assert.deepEqual(await readdir(dir), [digest]);
    });

    it(`${how}: a transfer cut part-way keeps its partial file; the next call resumes with a Range`, async () => {
      // The resume starts mid-slot (that slot's rest through the cache), then whole slots, then the tail.
      const bytes = randomBytes(13 * MiB + 100);
      const digest = await putBlob(bytes);
      const { cache, dir } = await newCache({ url: proxyUrl, parallelHashFromBytes });
      proxy.cutAfter = 5 * MiB + 12_345;
      await assert.rejects(
        cache.ensure(digest, bytes.length),
        (err: unknown) =>
          err instanceof ArtifactFetchError &&
          err.reason === 'unavailable' &&
          err.retryable &&
          err.url === `${proxyUrl}/v1/firmware/blobs/${digest}`,
      );
      proxy.cutAfter = Infinity;
      const partial = (await stat(join(dir, `${digest}.partial`))).size;
      assert.ok(partial > 0 && partial < bytes.length, `partial has ${partial} bytes`);
      const lease = await cache.acquire(digest, bytes.length);
      lease.release();
      assert.equal(lease.fetchedBytes, bytes.length - partial);
      assert.deepEqual(
        requestsFor(digest).map((r) => r.range),
        [undefined, `bytes=${partial}-`],
      );
      assert.equal(sha256(await readFile(lease.path)), digest);
      assert.deepEqual(await readdir(dir), [digest]);
      assert.deepEqual(openFilesUnder(dir), [], 'every handle closed, after the cut and after the resume');
    });

    it(`${how}: an aborted call stops the transfer, and the next one resumes from what it had`, async () => {
      const bytes = randomBytes(12 * MiB);
      const digest = await putBlob(bytes);
      const { cache, dir } = await newCache({ url: proxyUrl, parallelHashFromBytes });
      // Past the first 4 MiB slot, which is when a worker-thread download first reports progress.
      proxy.stallAfter = 6 * MiB;
      const controller = new AbortController();
      const aborted = cache.ensure(digest, bytes.length, {
        signal: controller.signal,
        onProgress: (b) => b >= MiB && controller.abort(new Error('operator cancelled')),
      });
      await assert.rejects(aborted, /operator cancelled/);
      proxy.stallAfter = Infinity;
      const partial = (await stat(join(dir, `${digest}.partial`))).size;
      assert.ok(partial > 0 && partial < bytes.length, `partial has ${partial} bytes`);
      await cache.ensure(digest, bytes.length);
      assert.equal(requestsFor(digest).at(-1)!.range, `bytes=${partial}-`);
      assert.equal(sha256(await readFile(join(dir, digest))), digest);
      assert.deepEqual(openFilesUnder(dir), [], 'every handle closed, after the abort and after the resume');
    });

    it(`${how}: bytes that do not hash to the digest: a typed error and nothing left on disk`, async () => {
      const bytes = randomBytes(MiB);
      const wrong = sha256(Buffer.from('something else'));
      await putBlob(bytes, wrong);
      const { cache, dir } = await newCache({ parallelHashFromBytes });
      await assert.rejects(
        cache.ensure(wrong, bytes.length),
        (err: unknown) =>
          err instanceof ArtifactFetchError &&
          err.reason === 'digest_mismatch' &&
          err.digest === wrong &&
          /hash to [0-9a-f]{64}/.test(err.message),
      );
      assert.deepEqual(await readdir(dir), []);
    });
  }

  it('a disk refusing direct writes (EINVAL): the download goes on through the page cache, and says so', async () => {
    const bytes = randomBytes(9 * MiB + 100);
    const digest = await putBlob(bytes);
    const { open: refusing, refusals, error: einval } = refusingDisk();
    const fallbacks: unknown[] = [];
    const { cache } = await newCache({
      parallelHashFromBytes: 0,
      openDirect: refusing,
      onDirectFallback: (f) => fallbacks.push(f),
    });
    const path = await cache.ensure(digest, bytes.length);
    assert.equal(sha256(await readFile(path)), digest);
    // Refused once, at the first whole slot; every slot after it went through the page cache without asking again.
    assert.deepEqual(refusals, [0]);
    assert.deepEqual(fallbacks, [{ reason: 'write_refused', error: einval, digest }]);
  });

  it('concurrent callers share one download', async () => {
    const bytes = randomBytes(2 * MiB);
    const digest = await putBlob(bytes);
    const { cache } = await newCache();
    const paths = await Promise.all([1, 2, 3, 4].map(() => cache.ensure(digest, bytes.length)));
    assert.equal(new Set(paths).size, 1);
    assert.equal(requestsFor(digest).length, 1);
  });

  it('one caller giving up does not stop the download the others wait for', async () => {
    const bytes = randomBytes(2 * MiB);
    const digest = await putBlob(bytes);
    const { cache } = await newCache();
    const quitter = new AbortController();
    const first = cache.ensure(digest, bytes.length, { signal: quitter.signal });
    const second = cache.ensure(digest, bytes.length);
    quitter.abort(new Error('gave up'));
    await assert.rejects(first, /gave up/);
    assert.equal(sha256(await readFile(await second)), digest);
    assert.equal(requestsFor(digest).length, 1);
  });

  it('evicts the least recently used artifacts past maxBytes, never one in use', async () => {
    const size = MiB;
    const [a, b, c, d] = await Promise.all([0, 1, 2, 3].map(() => putBlob(randomBytes(size))));
    const { cache, dir } = await newCache({ maxBytes: 2.5 * size });
    await cache.ensure(a!, size);
    await cache.ensure(b!, size);
    await cache.ensure(a!, size); // a is now more recent than b
    await cache.ensure(c!, size); // over the cap: b goes
    assert.deepEqual((await readdir(dir)).sort(), [a, c].sort());
    const lease = await cache.acquire(a!, size); // a is the least recent, but in use
    await cache.ensure(d!, size);
    assert.deepEqual((await readdir(dir)).sort(), [a, d].sort());
    lease.release();
    assert.equal(cache.sizeBytes, 2 * size);
  });

  it('unknown digest, wrong size, bad token: typed errors that say which', async () => {
    const { cache } = await newCache();
    const unknown = 'f'.repeat(64);
    await assert.rejects(
      cache.ensure(unknown, 10),
      (err: unknown) =>
        err instanceof ArtifactFetchError && err.reason === 'not_found' && err.status === 404 && !err.retryable,
    );
    const bytes = randomBytes(1000);
    const digest = await putBlob(bytes);
    await assert.rejects(
      cache.ensure(digest, 999),
      (err: unknown) => err instanceof ArtifactFetchError && err.reason === 'size_mismatch',
    );
    const { cache: stranger } = await newCache({ token: 'fleet_not-a-token' });
    await assert.rejects(
      stranger.ensure(digest, bytes.length),
      (err: unknown) => err instanceof ArtifactFetchError && err.reason === 'unauthorized' && err.status === 401,
    );
    await assert.rejects(
      cache.ensure('not-a-digest', 1),
      (err: unknown) => err instanceof ArtifactFetchError && err.reason === 'invalid',
    );
  });

  describe('fetchArtifact activity', () => {
    const run = (
      env: MockActivityEnvironment,
      fetchArtifact: FirmwareActivities['fetchArtifact'],
      input: { digest: string; size: number },
    ) => env.run(fetchArtifact, input) as ReturnType<FirmwareActivities['fetchArtifact']>;

    it('heartbeats bytes received, honours cancellation, and a retry resumes', async () => {
      const bytes = randomBytes(4 * MiB);
      const digest = await putBlob(bytes);
      const { cache, dir } = await newCache({ url: proxyUrl });
      const { fetchArtifact } = createFetchArtifactActivity({ artifacts: cache });
      proxy.stallAfter = 2 * MiB;
      const first = new MockActivityEnvironment(undefined, { logger: quiet });
      const beats: FetchArtifactHeartbeat[] = [];
      first.on('heartbeat', (d: FetchArtifactHeartbeat) => beats.push(d));
      const attempt = run(first, fetchArtifact, { digest, size: bytes.length });
      // A heartbeat only counts bytes on disk.
      await waitFor(async () => (beats.at(-1)?.bytes ?? 0) >= MiB, 'a stalled transfer heartbeating 1 MiB on disk');
      first.cancel();
      await assert.rejects(attempt, CancelledFailure);
      proxy.stallAfter = Infinity;
      assert.equal(beats[0]!.digest, digest);
      assert.ok(beats[0]!.bytes > 0);
      const retry = new MockActivityEnvironment({ attempt: 2 }, { logger: quiet });
      const result = await run(retry, fetchArtifact, { digest, size: bytes.length });
      assert.equal(result.path, join(dir, digest));
      assert.ok(result.fetchedBytes < bytes.length, `resumed: fetched ${result.fetchedBytes} bytes`);
      assert.match(requestsFor(digest).at(-1)!.range ?? '', /^bytes=\d+-$/);
      const cached = await run(new MockActivityEnvironment(undefined, { logger: quiet }), fetchArtifact, {
        digest,
        size: bytes.length,
      });
      assert.equal(cached.fetchedBytes, 0);
    });

    it('a missing blob is a non-retryable NOT_FOUND naming the digest', async () => {
      const { cache } = await newCache();
      const { fetchArtifact } = createFetchArtifactActivity({ artifacts: cache });
      await assert.rejects(
        run(new MockActivityEnvironment(undefined, { logger: quiet }), fetchArtifact, {
          digest: 'e'.repeat(64),
          size: 5,
        }),
        (err: unknown) =>
          err instanceof ApplicationFailure &&
          err.type === 'NOT_FOUND' &&
          err.nonRetryable &&
          err.message.includes('e'.repeat(64)),
      );
    });
  });
});

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

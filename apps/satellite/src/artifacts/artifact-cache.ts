import { mkdir, readdir, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import type { DirectOpener, DirectWriteFallback } from '@fleet/fwpkg';
import { ArtifactFetchError } from './artifact-errors.js';
import { downloadBlob } from './blob-download.js';
import { untilAborted } from '../until-aborted.js';

const digestPattern = /^[0-9a-f]{64}$/;

export interface HubSource {
  /** Base URL of the hub API, e.g. https://hub.example.internal:8080. */
  url: string;
  /** The satellite's hub token, resolved when a download starts (so a rotation needs no restart). */
  token: () => Promise<string>;
  /** CA bundle (PEM) for the hub's certificate, when it is not publicly trusted. */
  ca?: string | undefined;
}

export interface ArtifactCacheOptions {
  /** This site's cache directory: `<digest>` files, and `<digest>.partial` while one downloads. */
  dir: string;
  /** Bytes of complete artifacts kept; the least recently used ones not in use go first. */
  maxBytes: number;
  /** Where artifacts come from; without it only what is cached already can be served. */
  hub?: HubSource | undefined;
  log: Logger;
  /** From this size on a download is hashed on a worker thread; PARALLEL_FILE_BYTES (64 MiB) unless set. */
  parallelHashFromBytes?: number | undefined;
  /** How large downloads write whole slots around the page cache (SlotFile); tests put a failing disk there. */
  openDirect?: DirectOpener | undefined;
  /** A download's file went back to the page cache (SlotFile's fallbacks), with the digest it is of. */
  onDirectFallback?: ((fallback: DirectWriteFallback & { digest: string }) => void) | undefined;
}

export interface EnsureOptions {
  signal?: AbortSignal | undefined;
  /** Bytes of the artifact received so far (resumed ones included), as a download grows them. */
  onProgress?: ((bytes: number) => void) | undefined;
}

/** A cached artifact that eviction leaves alone until released. */
export interface ArtifactLease {
  path: string;
  /** Bytes this call's download received over the network (0 when it was cached). */
  fetchedBytes: number;
  release(): void;
}

interface SharedDownload {
  done: Promise<number>;
  controller: AbortController;
  waiters: number;
  listeners: Set<(bytes: number) => void>;
}

/**
 * Firmware packages of one site, by sha256, fetched from the hub's blob endpoint. Downloads
 * resume, are verified before they count, and are shared: callers asking for the same digest
 * at once wait on one download, which stops only when every one of them has given up. The
 * cache stays under `maxBytes` by evicting least recently used artifacts, never one in use.
 */
export class ArtifactCache {
  /** Complete artifacts; `usedAt` orders them by last use (a counter: clocks tie within a millisecond). */
  private readonly entries = new Map<string, { size: number; usedAt: number }>();
  private readonly pins = new Map<string, number>();
  private readonly downloads = new Map<string, SharedDownload>();
  /** One keep-alive connection pool to the hub; a body idle for a minute counts as a broken transfer. */
  private readonly dispatcher: Agent;
  private totalBytes = 0;
  private useClock = 0;
  private loaded: Promise<void> | undefined;

  constructor(private readonly options: ArtifactCacheOptions) {
    const ca = options.hub?.ca;
    this.dispatcher = new Agent({
      connect: { timeout: 10_000, ...(ca ? { ca } : {}) },
      headersTimeout: 30_000,
      bodyTimeout: 60_000,
    });
  }

  /** The local path of an artifact, downloading it first unless it is cached. */
  async ensure(digest: string, size: number, opts: EnsureOptions = {}): Promise<string> {
    const lease = await this.acquire(digest, size, opts);
    lease.release();
    return lease.path;
  }

  /** As `ensure`, and the artifact is not evicted until the lease is released (e.g. after a push). */
  async acquire(digest: string, size: number, opts: EnsureOptions = {}): Promise<ArtifactLease> {
    if (!digestPattern.test(digest))
      throw new ArtifactFetchError('invalid', digest, undefined, 'not a lower-case hex sha256 digest');
    if (!Number.isSafeInteger(size) || size < 0)
      throw new ArtifactFetchError('invalid', digest, undefined, `size ${size} is not a byte count`);
    opts.signal?.throwIfAborted();
    await (this.loaded ??= this.load().catch((err: unknown) => {
      this.loaded = undefined; // e.g. the directory was not writable yet: try again next call
      throw err;
    }));
    this.pin(digest);
    try {
      const fetchedBytes = (await this.isCached(digest)) ? 0 : await this.join(digest, size, opts);
      const cachedSize = this.entries.get(digest)!.size;
      if (cachedSize !== size)
        throw new ArtifactFetchError(
          'size_mismatch',
          digest,
          undefined,
          `the cached artifact has ${cachedSize} bytes, the caller expects ${size}`,
        );
      this.touch(digest);
      let released = false;
      return {
        path: this.pathOf(digest),
        fetchedBytes,
        release: () => {
          if (!released) this.unpin(digest);
          released = true;
        },
      };
    } catch (err) {
      this.unpin(digest);
      throw err;
    }
  }

  /** Bytes of complete artifacts on disk. */
  get sizeBytes(): number {
    return this.totalBytes;
  }

  async close(): Promise<void> {
    for (const d of this.downloads.values()) d.controller.abort(new Error('the artifact cache is closing'));
    await this.dispatcher.close();
  }

  private pathOf(digest: string): string {
    return join(this.options.dir, digest);
  }

  /** Indexes what an earlier process cached; recency survives restarts as the files' mtime. */
  private async load(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true });
    const found: { digest: string; size: number; mtimeMs: number }[] = [];
    for (const name of await readdir(this.options.dir)) {
      if (!digestPattern.test(name)) continue;
      const info = await stat(this.pathOf(name));
      found.push({ digest: name, size: info.size, mtimeMs: info.mtimeMs });
    }
    for (const f of found.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
      this.entries.set(f.digest, { size: f.size, usedAt: ++this.useClock });
      this.totalBytes += f.size;
    }
  }

  private async isCached(digest: string): Promise<boolean> {
    if (!this.entries.has(digest)) return false;
    // Someone may have cleaned the directory by hand: the index is only a hint.
    if (await stat(this.pathOf(digest)).catch(() => undefined)) return true;
    this.forget(digest);
    return false;
  }

  /** Waits for the one download of `digest`, starting it if none runs. */
  private async join(digest: string, size: number, opts: EnsureOptions): Promise<number> {
    let shared = this.downloads.get(digest);
    // One that everyone left is winding down: let it release the partial file before starting anew.
    while (shared?.controller.signal.aborted) {
      await shared.done.catch(() => undefined);
      shared = this.downloads.get(digest);
    }
    opts.signal?.throwIfAborted();
    if (!shared) {
      const controller = new AbortController();
      const listeners = new Set<(bytes: number) => void>();
      const created: SharedDownload = {
        done: this.download(digest, size, controller.signal, (bytes) => listeners.forEach((l) => l(bytes))).finally(
          () => {
            if (this.downloads.get(digest) === created) this.downloads.delete(digest);
          },
        ),
        controller,
        waiters: 0,
        listeners,
      };
      created.done.catch(() => undefined); // every waiter may have left; the outcome is theirs to see
      this.downloads.set(digest, created);
      shared = created;
    }
    const { onProgress } = opts;
    shared.waiters++;
    if (onProgress) shared.listeners.add(onProgress);
    try {
      return await untilAborted(shared.done, opts.signal);
    } finally {
      shared.waiters--;
      if (onProgress) shared.listeners.delete(onProgress);
      // The last caller gone: stop the transfer, and return once it has stopped, so the
      // partial file (kept for the next call) is settled when the cancellation is seen.
      if (shared.waiters === 0) {
        shared.controller.abort(opts.signal?.reason);
        await shared.done.catch(() => undefined);
      }
    }
  }

  private async download(
    digest: string,
    size: number,
    signal: AbortSignal,
    onProgress: (bytes: number) => void,
  ): Promise<number> {
    const { hub, log } = this.options;
    if (!hub)
      throw new ArtifactFetchError(
        'config',
        digest,
        undefined,
        'not cached, and this satellite has no hub configured (config hub.url)',
      );
    let token: string;
    try {
      token = await hub.token();
    } catch (err) {
      throw new ArtifactFetchError(
        'config',
        digest,
        undefined,
        `the hub token could not be resolved: ${(err as Error).message}`,
        { cause: err },
      );
    }
    await this.evict(size);
    const url = `${hub.url.replace(/\/$/, '')}/v1/firmware/blobs/${digest}`;
    const started = Date.now();
    const { onDirectFallback } = this.options;
    const fetched = await downloadBlob({
      url,
      token,
      digest,
      size,
      partialPath: `${this.pathOf(digest)}.partial`,
      finalPath: this.pathOf(digest),
      dispatcher: this.dispatcher,
      signal,
      onProgress,
      parallelFromBytes: this.options.parallelHashFromBytes,
      openDirect: this.options.openDirect,
      onDirectFallback: onDirectFallback && ((f) => onDirectFallback({ ...f, digest })),
    });
    this.entries.set(digest, { size, usedAt: ++this.useClock });
    this.totalBytes += size;
    log.info(
      { digest, size, fetchedBytes: fetched, resumedAt: size - fetched, durationMs: Date.now() - started },
      'artifact downloaded and verified',
    );
    await this.evict(0);
    return fetched;
  }

  /** Evicts least recently used artifacts not in use until `reserve` more bytes fit under the cap. */
  private async evict(reserve: number): Promise<void> {
    if (this.totalBytes + reserve <= this.options.maxBytes) return;
    const candidates = [...this.entries]
      .filter(([digest]) => !this.pins.has(digest))
      .sort((a, b) => a[1].usedAt - b[1].usedAt);
    for (const [digest, entry] of candidates) {
      if (this.totalBytes + reserve <= this.options.maxBytes) return;
      await rm(this.pathOf(digest), { force: true });
      this.forget(digest);
      this.options.log.info(
        { digest, size: entry.size, cacheBytes: this.totalBytes },
        'artifact evicted (least recently used)',
      );
    }
    if (this.totalBytes + reserve > this.options.maxBytes) {
      this.options.log.warn(
        { cacheBytes: this.totalBytes, reserve, maxBytes: this.options.maxBytes },
        'artifact cache over its cap: everything left is in use',
      );
    }
  }

  private touch(digest: string): void {
    this.entries.get(digest)!.usedAt = ++this.useClock;
    const now = new Date();
    utimes(this.pathOf(digest), now, now).catch(() => undefined);
  }

  private forget(digest: string): void {
    const entry = this.entries.get(digest);
    if (!entry) return;
    this.entries.delete(digest);
    this.totalBytes -= entry.size;
  }

  private pin(digest: string): void {
    this.pins.set(digest, (this.pins.get(digest) ?? 0) + 1);
  }

  private unpin(digest: string): void {
    const n = (this.pins.get(digest) ?? 1) - 1;
    if (n > 0) this.pins.set(digest, n);
    else this.pins.delete(digest);
  }
}

import { createReadStream, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { request } from 'undici';
import { createApiToken } from '@fleet/db';
import { ArtifactCache } from '@fleet/satellite';
import { writeBenchPackage } from './fwpkg-parse.js';
import { loopbackCopyMibPerS } from './loopback-copy.js';
import { processCpu } from './process-cpu.js';
import { startSeededHub } from './seeded-hub.js';

export interface ArtifactTransferFigures {
  package_mib: number;
  /** The package file sent over one plain loopback TCP connection to another process. */
  raw_loopback_mib_per_s: number;
  /** POST /v1/firmware/packages into a hub process: streamed, parsed, hashed, stored and fsynced. */
  artifact_upload_mib_per_s: number;
  /** A satellite's ArtifactCache fetching the blob from the hub: streamed, hashed, stored and fsynced. */
  artifact_fetch_mib_per_s: number;
  artifact_upload_ratio: number;
  artifact_fetch_ratio: number;
  /**
   * The package file copied into a new file on the same disk in 4 MiB writes and fsynced: what storing the bytes
   * durably costs here, which both paths must pay (the loopback copy stores nothing).
   */
  raw_disk_write_mib_per_s: number;
  artifact_upload_over_disk_ratio: number;
  artifact_fetch_over_disk_ratio: number;
  /**
   * CPU seconds per GiB moved in the best round, per process (the hub; this process as the uploading client or the
   * fetching satellite): on two cores the paths are CPU-bound, and this says by what. One round's figures: the load
   * of the moment moves them too.
   */
  cpu_s_per_gib: { upload: Record<string, number>; fetch: Record<string, number> };
  raw_loopback_runs_mib_per_s: number[];
  raw_disk_write_runs_mib_per_s: number[];
  artifact_upload_runs_mib_per_s: number[];
  artifact_fetch_runs_mib_per_s: number[];
  statistic: string;
  load_avg_1m: number;
}

export interface ArtifactTransferOptions {
  /** Package size; 1 GiB by default. */
  bytes?: number;
  /** Rounds of loopback, upload, fetch (interleaved, so load from elsewhere falls on all three). */
  runs?: number;
}

export interface BenchHub {
  url: string;
  operator: string;
  admin: string;
  dir: string;
  pid: number;
  close(): Promise<void>;
}

/** A hub process over a fresh, empty (migrated) database, its blobs in a scratch folder. */
export async function startArtifactHub(name: string): Promise<BenchHub> {
  const stack = await startSeededHub({
    name,
    devices: 0,
    role: 'operator',
    hubConfig: (dir) => ({ firmware: { blobDir: join(dir, 'blobs'), maxPackageBytes: 64 * 1024 ** 3 } }),
  });
  try {
    const admin = (await createApiToken(stack.db, `bench-${name}-admin`, 'admin')).token;
    return { url: stack.url, operator: stack.token, admin, dir: stack.dir, pid: stack.hub.pid!, close: stack.close };
  } catch (err) {
    await stack.close();
    throw err;
  }
}

/** Reads the file once (into the page cache) after writing it back, so no run pays for the disk alone. */
async function settle(path: string): Promise<void> {
  const file = await open(path, 'r');
  try {
    await file.sync();
    const buffer = Buffer.allocUnsafe(4 << 20);
    for (let at = 0; ;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
  } finally {
    await file.close();
  }
}

export async function upload(hub: BenchHub, path: string, size: number): Promise<{ id: string; digest: string }> {
  const res = await request(`${hub.url}/v1/firmware/packages?file_name=bench.fwpkg`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${hub.operator}`,
      'content-type': 'application/octet-stream',
      'content-length': String(size),
    },
    body: createReadStream(path, { highWaterMark: 1 << 20 }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 201) throw new Error(`upload: HTTP ${res.statusCode}: ${text}`);
  return JSON.parse(text) as { id: string; digest: string };
}

async function remove(hub: BenchHub, id: string): Promise<void> {
  const res = await request(`${hub.url}/v1/firmware/packages/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${hub.admin}` },
  });
  await res.body.dump();
  if (res.statusCode !== 204) throw new Error(`delete: HTTP ${res.statusCode}`);
}

/** `path` copied into a new file beside it (4 MiB reads and writes), fsynced, then deleted: MiB/s. */
async function diskWriteMibPerS(path: string): Promise<number> {
  const source = await open(path, 'r');
  const copy = `${path}.disk-copy`;
  const target = await open(copy, 'wx');
  try {
    const buffer = Buffer.allocUnsafe(4 << 20);
    const started = process.hrtime.bigint();
    let at = 0;
    for (;;) {
      const { bytesRead } = await source.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) break;
      await target.write(buffer, 0, bytesRead, at);
      at += bytesRead;
    }
    await target.sync();
    return at / 2 ** 20 / seconds(started);
  } finally {
    await target.close();
    await source.close();
    rmSync(copy, { force: true });
  }
}

const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

/**
 * The firmware data paths against the machine's own loopback: one generated PLDM package copied over plain
 * loopback TCP, uploaded into a hub (separate process, as deployed) and fetched from it by a satellite's
 * artifact cache (this process), in interleaved rounds, with the same bytes written durably to a new file on the
 * same disk as the storage baseline. Each upload is a new package (the previous round's
 * is deleted), and each fetch goes into an empty cache. Best of the rounds; ratios of the bests.
 */
export async function measureArtifactTransfer(options: ArtifactTransferOptions = {}): Promise<ArtifactTransferFigures> {
  const bytes = options.bytes ?? 1024 ** 3;
  const runs = options.runs ?? 3;
  const hub = await startArtifactHub('artifacts');
  const path = join(hub.dir, 'bench.fwpkg');
  try {
    const { size, sha256 } = await writeBenchPackage(path, bytes);
    await settle(path);
    const mib = size / 2 ** 20;
    const loopback: number[] = [];
    const disk: number[] = [];
    const uploads: number[] = [];
    const fetches: number[] = [];
    type Cpu = Record<string, number>;
    const cpu = { upload: [] as Cpu[], fetch: [] as Cpu[] };
    const perGib = (used: Cpu) =>
      Object.fromEntries(Object.entries(used).map(([k, v]) => [k, round(v / (mib / 1024), 2)]));
    for (let i = 0; i < runs; i++) {
      loopback.push(await loopbackCopyMibPerS(path, 1));
      disk.push(await diskWriteMibPerS(path));

      let used = processCpu({ hub: { pid: hub.pid }, client: { pid: process.pid } });
      let started = process.hrtime.bigint();
      const pkg = await upload(hub, path, size);
      uploads.push(mib / seconds(started));
      cpu.upload.push(perGib(used.stop()));
      if (pkg.digest !== sha256) throw new Error(`the hub stored digest ${pkg.digest}, the package is ${sha256}`);

      const cacheDir = join(hub.dir, `cache-${i}`);
      const cache = new ArtifactCache({
        dir: cacheDir,
        maxBytes: 2 * size,
        hub: { url: hub.url, token: () => Promise.resolve(hub.operator) },
        log: pino({ level: 'silent' }),
      });
      try {
        used = processCpu({ hub: { pid: hub.pid }, satellite: { pid: process.pid } });
        started = process.hrtime.bigint();
        await cache.ensure(sha256, size);
        fetches.push(mib / seconds(started));
        cpu.fetch.push(perGib(used.stop()));
      } finally {
        await cache.close();
        rmSync(cacheDir, { recursive: true, force: true });
      }
      await remove(hub, pkg.id);
    }
    const best = (xs: number[]) => Math.max(...xs);
    const ofBest = (xs: number[], figures: Cpu[]) => {
      const chosen = figures[xs.indexOf(best(xs))]!;
      return {
        ...chosen,
        total: round(
          Object.values(chosen).reduce((a, b) => a + b, 0),
          2,
        ),
      };
    };
    return {
      package_mib: round(mib, 0),
      raw_loopback_mib_per_s: round(best(loopback)),
      artifact_upload_mib_per_s: round(best(uploads)),
      artifact_fetch_mib_per_s: round(best(fetches)),
      artifact_upload_ratio: round(best(uploads) / best(loopback), 3),
      artifact_fetch_ratio: round(best(fetches) / best(loopback), 3),
      raw_disk_write_mib_per_s: round(best(disk)),
      artifact_upload_over_disk_ratio: round(best(uploads) / best(disk), 3),
      artifact_fetch_over_disk_ratio: round(best(fetches) / best(disk), 3),
      cpu_s_per_gib: {
        upload: ofBest(uploads, cpu.upload),
        fetch: ofBest(fetches, cpu.fetch),
      },
      raw_loopback_runs_mib_per_s: loopback.map((x) => round(x)),
      raw_disk_write_runs_mib_per_s: disk.map((x) => round(x)),
      artifact_upload_runs_mib_per_s: uploads.map((x) => round(x)),
      artifact_fetch_runs_mib_per_s: fetches.map((x) => round(x)),
      statistic: `best of ${runs}`,
      load_avg_1m: round(loadavg()[0]!, 2),
    };
  } finally {
    await hub.close();
  }
}

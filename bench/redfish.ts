import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getFirmwareInventory, pushFirmware, RedfishClient, SiteLimiter } from '@fleet/redfish';
import { ManagedProcess, repoRoot } from '../tools/lib/processes.js';

/**
 * Redfish client and simulator figures, every receiver in a process of its own so the
 * client's event loop is measured alone:
 *
 * - inventory: getFirmwareInventory on N simulated gb200 trays (default 1,000), all BMCs
 *   at once under one SiteLimiter (each client still sends one request at a time to its BMC).
 *   One cold pass (discovery, connections), then timed warm passes. The trays advertise `$expand`, so
 *   a read is one request for the collection; the baseline, in the same run, is the same trays
 *   without query support (quirk noExpandQuery), read member by member (`inventory_member_by_member_*`).
 * - simulator RSS: a 10,000-BMC simulator once ready and after one request to a sample of
 *   its BMCs, against an idle 1-BMC simulator started in the same run.
 * - upload: pushFirmware streaming a 1 GiB sparse file to a node:http sink, 5 runs, each in a fresh
 *   uploader process whose RSS is sampled every 50 ms (and its exact kernel peak, VmHWM, read); the
 *   same file over a raw loopback socket from the same process as baseline. The RSS figure is the
 *   worst run, the rates are medians; every run is listed under upload_runs.
 *
 * Args: [bmcs=1000] [siteCap=100] [warmPasses=2], or `upload` for the upload figures alone.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  if (args[0] === 'upload') {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-bench-redfish-'));
    try {
      return await uploadFigures(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const bmcs = Number(args[0] ?? 1_000);
  const siteCap = Number(args[1] ?? 100);
  const warmPasses = Number(args[2] ?? 2);
  const dir = await mkdtemp(join(tmpdir(), 'fleet-bench-redfish-'));
  const processes: ManagedProcess[] = [];
  try {
    // Upload first, before the simulators load the machine (its uploaders are processes of their own).
    const upload = await uploadFigures(dir);
    const memberByMember = await inventoryFigures(dir, processes, bmcs, siteCap, warmPasses, false);
    const inventory = await inventoryFigures(dir, processes, bmcs, siteCap, warmPasses, true);
    const rss = await simulatorRssFigures(dir, processes);
    return {
      ...inventory,
      inventory_member_by_member_reads_per_s: memberByMember['inventory_reads_per_s'],
      inventory_member_by_member_requests_per_read: memberByMember['inventory_requests_per_read'],
      inventory_expand_speedup: round(
        Number(inventory['inventory_reads_per_s']) / Number(memberByMember['inventory_reads_per_s']),
        2,
      ),
      ...rss,
      ...upload,
    };
  } finally {
    await Promise.allSettled(processes.map((p) => p.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}

const MiB = 1024 * 1024;
const USER = 'admin';
const PASSWORD = 'bench-pw';
const basicAuth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const round = (v: number, digits = 1) => Number(v.toFixed(digits));

// ---- simulator processes --------------------------------------------------------------------------

interface SimProcess {
  process: ManagedProcess;
  adminUrl: string;
  pid: number;
  urls: string[];
}

async function freePort(): Promise<number> {
  const s = createTcpServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * `node --import tsx packages/simulators/src/main.ts --config <file>` with `count` gb200 trays on
 * 127.<second>.<third>.1 onwards.
 */
async function startSimulator(
  dir: string,
  processes: ManagedProcess[],
  name: string,
  count: number,
  second: number,
  expandQuery = true,
): Promise<SimProcess> {
  const port = await freePort();
  const adminPort = await freePort();
  const third = randomInt(0, 250 - Math.ceil(count / 256));
  const config = {
    log: { level: 'info' },
    timeScale: 1,
    admin: { port: adminPort },
    generate: [
      {
        count,
        idPrefix: `${name}-`,
        firstAddress: `127.${second}.${third}.1`,
        port,
        username: USER,
        password: PASSWORD,
        profile: 'gb200-compute',
        ...(expandQuery ? {} : { quirks: { noExpandQuery: true } }),
      },
    ],
  };
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(config));
  const proc = new ManagedProcess(name, 'packages/simulators/src/main.ts', file, join(dir, 'logs'));
  processes.push(proc);
  await proc.start('redfish simulator ready', 180_000);
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const list = (await (await fetch(`${adminUrl}/bmcs`)).json()) as { items: { id: string; url: string }[] };
  if (list.items.length !== count)
    throw new Error(`${name}: simulator lists ${list.items.length} BMCs, configured ${count}`);
  return { process: proc, adminUrl, pid: proc.child!.pid!, urls: list.items.map((i) => i.url) };
}

async function vmRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) / 1024;
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i]!, i);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// ---- inventory over 1,000 BMCs --------------------------------------------------------------------

async function inventoryFigures(
  dir: string,
  processes: ManagedProcess[],
  count: number,
  siteCap: number,
  warmPasses: number,
  expandQuery: boolean,
): Promise<Record<string, unknown>> {
  const sim = await startSimulator(dir, processes, 'inventory', count, randomInt(2, 120), expandQuery);
  const limiter = new SiteLimiter(siteCap);
  const clients = sim.urls.map(
    (baseUrl) =>
      new RedfishClient({ baseUrl, credentials: { username: USER, password: PASSWORD }, siteLimiter: limiter }),
  );
  try {
    const pass = async () => {
      const started = performance.now();
      const sizes = await Promise.all(clients.map(async (c) => (await getFirmwareInventory(c)).components.length));
      const seconds = (performance.now() - started) / 1000;
      const expected = sizes[0]!;
      if (expected === 0 || sizes.some((n) => n !== expected))
        throw new Error(`inconsistent inventories: ${[...new Set(sizes)].join(', ')} components`);
      return { seconds, components: expected };
    };
    const cold = await pass();
    const ids = sim.urls.map((_, i) => `inventory-${String(i + 1).padStart(4, '0')}`);
    await forEachLimited(ids, 32, async (id) => {
      await fetch(`${sim.adminUrl}/bmcs/${id}/requests`, { method: 'DELETE' });
    });
    let warmSeconds = 0;
    for (let i = 0; i < warmPasses; i++) warmSeconds += (await pass()).seconds;
    // The simulator's own request log says how many HTTP requests the timed passes took, and that all succeeded.
    let requests = 0;
    let failed = 0;
    await forEachLimited(ids, 32, async (id) => {
      const log = (await (await fetch(`${sim.adminUrl}/bmcs/${id}/requests`)).json()) as {
        items: { status: number }[];
      };
      requests += log.items.length;
      failed += log.items.filter((r) => r.status !== 200).length;
    });
    if (failed > 0) throw new Error(`${failed} of ${requests} inventory requests were not answered 200`);
    const reads = count * warmPasses;
    return {
      inventory_reads_per_s: round(reads / warmSeconds),
      inventory_bmcs: count,
      inventory_wall_s: round(warmSeconds / warmPasses, 2),
      inventory_cold_wall_s: round(cold.seconds, 2),
      inventory_http_requests_per_s: Math.round(requests / warmSeconds),
      inventory_requests_per_read: round(requests / reads, 1),
      inventory_components_per_bmc: cold.components,
      inventory_site_cap: siteCap,
      inventory_warm_passes: warmPasses,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await sim.process.stop();
  }
}

// ---- simulator memory at 10,000 BMCs ---------------------------------------------------------------

async function simulatorRssFigures(dir: string, processes: ManagedProcess[]): Promise<Record<string, unknown>> {
  const idle = await startSimulator(dir, processes, 'idle', 1, randomInt(121, 130));
  const idleRss = await vmRssMiB(idle.pid);
  await idle.process.stop();

  const big = await startSimulator(dir, processes, 'scale', 10_000, randomInt(131, 250));
  try {
    const readyRss = await vmRssMiB(big.pid);
    const sample = big.urls.filter((_, i) => i % 10 === 0);
    await forEachLimited(sample, 50, async (url) => {
      const res = await fetch(`${url}/redfish/v1/Systems/System_0`, { headers: { authorization: basicAuth } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
    });
    const sampledRss = await vmRssMiB(big.pid);
    return {
      simulator_rss_mib_10k_bmcs: round(sampledRss),
      simulator_rss_mib_10k_bmcs_ready: round(readyRss),
      simulator_rss_sampled_bmcs: sample.length,
      simulator_rss_mib_1_bmc_idle: round(idleRss),
    };
  } finally {
    await big.process.stop();
  }
}

// ---- 1 GiB upload ----------------------------------------------------------------------------------

const SINK_ENV = 'FLEET_BENCH_REDFISH_SINK';
const UPLOADER_ENV = 'FLEET_BENCH_REDFISH_UPLOADER';
const TASK = '/redfish/v1/TaskService/Tasks/1';
const UPLOAD_RUNS = 5;

/** This file again, as a child process in the role `env` names; resolves with the child's `<tag> {json}` line. */
async function startRole<T>(
  env: Record<string, string>,
  tag: string,
  timeoutMs: number,
): Promise<{ child: ChildProcess; line: T; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + timeoutMs;
  const pattern = new RegExp(`^${tag} (\\{.*\\})$`, 'm');
  for (;;) {
    const line = pattern.exec(out)?.[1];
    if (line) return { child, line: JSON.parse(line) as T, output: () => out };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${tag.toLowerCase()} child failed:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

interface UploadJob {
  httpUrl: string;
  tcpPort: number;
  file: string;
  size: number;
}

interface UploadRun {
  /**
   * The push's peak RSS minus the RSS just before it, in a process that has made no request yet: the
   * larger of the 50 ms samples of process.memoryUsage().rss and the kernel's exact peak (VmHWM, reset
   * via /proc/self/clear_refs just before the push; null where the kernel refuses the reset).
   */
  peak_rss_delta_mib: number;
  sampled_rss_delta_mib: number;
  hwm_rss_delta_mib: number | null;
  mib_per_s: number;
  raw_loopback_mib_per_s: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * UPLOAD_RUNS runs, each in a fresh uploader process (so no run inherits another's heap or malloc
 * arenas, and the sink's memory is never counted): pushFirmware of the 1 GiB file, then the raw
 * loopback baseline in the same process. The headline RSS figure is the worst run.
 */
async function uploadFigures(dir: string): Promise<Record<string, unknown>> {
  const size = 1024 * MiB;
  const file = join(dir, 'firmware-1gib.bin');
  const fh = await open(file, 'w');
  await fh.truncate(size);
  await fh.close();
  // Read once so every run finds the file in the page cache: otherwise the first run alone pays for filling it.
  for await (const chunk of createReadStream(file, { highWaterMark: MiB })) void chunk;
  const sink = await startRole<{ http: number; tcp: number }>({ [SINK_ENV]: '1' }, 'SINK', 30_000);
  try {
    const job: UploadJob = {
      httpUrl: `http://127.0.0.1:${sink.line.http}`,
      tcpPort: sink.line.tcp,
      file,
      size,
    };
    const runs: UploadRun[] = [];
    for (let i = 0; i < UPLOAD_RUNS; i++) {
      const uploader = await startRole<UploadRun>({ [UPLOADER_ENV]: JSON.stringify(job) }, 'UPLOAD', 120_000);
      // It exits by itself once its client is closed.
      if (uploader.child.exitCode === null) await once(uploader.child, 'exit');
      if (uploader.child.exitCode !== 0)
        throw new Error(`uploader exited ${uploader.child.exitCode}:\n${uploader.output()}`);
      runs.push(uploader.line);
      const received = ((await (await fetch(`${job.httpUrl}/stats`)).json()) as { bytes: number }).bytes;
      if (received < size) throw new Error(`the sink received ${received} bytes, fewer than the ${size}-byte file`);
    }
    const worst = Math.max(...runs.map((r) => r.peak_rss_delta_mib));
    // Reported either way, so the run keeps its other figures; the budget is 48 MiB.
    if (worst >= 48) console.error(`warning: upload peak RSS delta ${worst.toFixed(1)} MiB is over the 48 MiB budget`);
    return {
      upload_1gib_peak_rss_delta_mib: worst,
      upload_mib_per_s: median(runs.map((r) => r.mib_per_s)),
      upload_bytes_received: ((await (await fetch(`${job.httpUrl}/stats`)).json()) as { bytes: number }).bytes,
      raw_loopback_mib_per_s: median(runs.map((r) => r.raw_loopback_mib_per_s)),
      // Per run, against the raw socket in the same process a moment later, so load on the machine cancels out.
      upload_vs_raw_loopback: round(median(runs.map((r) => r.mib_per_s / r.raw_loopback_mib_per_s)), 2),
      upload_runs: runs,
    };
  } finally {
    await stopChild(sink.child);
    await rm(file, { force: true });
  }
}

function statusKiB(field: 'VmRSS' | 'VmHWM'): number {
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  if (!kb) throw new Error(`no ${field} in /proc/self/status`);
  return Number(kb);
}

/** One push of the file: its peak RSS over the RSS just before it, and its rate. */
async function measuredPush(
  client: RedfishClient,
  job: UploadJob,
): Promise<{ sampled: number; hwm: number | null; mibPerS: number }> {
  // RSS before, then sampled every 50 ms while the upload runs on this event loop; the kernel's
  // high-water mark is reset here too ("5" to clear_refs) where the kernel allows it.
  let hwmReset = true;
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    hwmReset = false;
  }
  const baseRss = process.memoryUsage().rss;
  let peakRss = baseRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const started = performance.now();
  let result;
  try {
    result = await pushFirmware(client, { filePath: job.file, fileName: 'firmware-1gib.bin' });
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  const hwm = hwmReset ? statusKiB('VmHWM') * 1024 : undefined;
  if (result.taskUri !== TASK) throw new Error(`unexpected task ${result.taskUri}`);
  return {
    sampled: round((peakRss - baseRss) / MiB),
    hwm: hwm === undefined ? null : round((hwm - baseRss) / MiB),
    mibPerS: Math.round(job.size / MiB / seconds),
  };
}

/** The uploader process: one push (its first request, as in a fresh agent), then the raw loopback baseline. */
async function serveUploader(job: UploadJob): Promise<void> {
  const client = new RedfishClient({ baseUrl: job.httpUrl, credentials: { username: USER, password: PASSWORD } });
  try {
    const first = await measuredPush(client, job);
    const raw = await rawLoopback(job.file, job.tcpPort, job.size);
    const run: UploadRun = {
      peak_rss_delta_mib: Math.max(first.sampled, first.hwm ?? 0),
      sampled_rss_delta_mib: first.sampled,
      hwm_rss_delta_mib: first.hwm,
      mib_per_s: first.mibPerS,
      raw_loopback_mib_per_s: Math.round(job.size / MiB / raw),
    };
    process.stdout.write(`UPLOAD ${JSON.stringify(run)}\n`);
  } finally {
    await client.close();
  }
}

/** Seconds to push the file's bytes over a plain TCP socket until the receiver confirms the count. */
async function rawLoopback(file: string, port: number, size: number): Promise<number> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let reply = '';
  socket.on('data', (d: Buffer) => (reply += d.toString()));
  const ended = once(socket, 'end');
  const started = performance.now();
  // The same 256 KiB reads the client's multipart body uses.
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) {
    if (!socket.write(chunk as Buffer)) await once(socket, 'drain');
  }
  socket.end();
  await ended;
  const seconds = (performance.now() - started) / 1000;
  socket.destroy();
  if (Number(reply) !== size) throw new Error(`raw loopback receiver counted ${reply} bytes, sent ${size}`);
  return seconds;
}

/**
 * The receiving process: a minimal Redfish UpdateService over node:http that counts and
 * discards the pushed body, and a TCP server that counts a raw stream and answers the count.
 */
async function serveSink(): Promise<void> {
  let lastUpload = 0;
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const http = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    if (req.method === 'GET' && path === '/redfish/v1')
      return json(res, 200, {
        '@odata.id': '/redfish/v1',
        UpdateService: { '@odata.id': '/redfish/v1/UpdateService' },
      });
    if (req.method === 'GET' && path === '/redfish/v1/UpdateService') {
      return json(res, 200, {
        '@odata.id': '/redfish/v1/UpdateService',
        MultipartHttpPushUri: '/redfish/v1/UpdateService/update-multipart',
      });
    }
    if (req.method === 'GET' && path === '/stats') return json(res, 200, { bytes: lastUpload });
    if (req.method === 'POST' && path === '/redfish/v1/UpdateService/update-multipart') {
      let bytes = 0;
      req.on('data', (c: Buffer) => (bytes += c.length));
      req.on('end', () => {
        lastUpload = bytes;
        json(res, 202, { '@odata.id': TASK, TaskState: 'New' }, { location: TASK });
      });
      return;
    }
    json(res, 404, { error: { message: `no ${req.method} ${path}` } });
  });
  http.requestTimeout = 0;
  const tcp = createTcpServer({ allowHalfOpen: true }, (socket) => {
    let bytes = 0;
    socket.on('data', (c: Buffer) => (bytes += c.length));
    socket.on('end', () => socket.end(String(bytes)));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  process.once('SIGTERM', () => process.exit(0));
  process.stdout.write(
    `SINK ` +
      `${JSON.stringify({ http: (http.address() as AddressInfo).port, tcp: (tcp.address() as AddressInfo).port })}\n`,
  );
}

if (process.env[SINK_ENV] === '1') await serveSink();
else if (process.env[UPLOADER_ENV]) {
  await serveUploader(JSON.parse(process.env[UPLOADER_ENV]) as UploadJob);
  process.exit(0);
}

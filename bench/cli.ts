import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../tools/lib/processes.js';
import { startSeededHub } from './lib/seeded-hub.js';

/** fleetctl's default page size: the raw baseline asks for the same pages. */
const pageSize = 500;
const runs = 3;

/**
 * `fleetctl get devices -o json` over 10,000 devices against the same pages fetched raw (fetch + JSON.parse) in the
 * same run: wall time and the CLI's peak RSS (GNU time), so streaming pages shows as a flat memory line.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const count = Number(args[0] ?? 10_000);
  const stack = await startSeededHub({ name: 'cli', devices: count, role: 'viewer', poolSize: 5 });
  try {
    const { dir, token, url: hubUrl } = stack;
    writeFileSync(join(dir, 'token'), token, { mode: 0o600 });
    writeFileSync(
      join(dir, 'config.yaml'),
      `currentContext: bench\ncontexts:\n  bench:\n    hub: ${hubUrl}\n    tokenFile: ${join(dir, 'token')}\n`,
    );

    // Warm both paths (hub plans and caches, tsx's compile cache) before measuring.
    await listRaw(hubUrl, token);
    await fleetctl(dir, ['--help']);

    const raw: number[] = [];
    const cli: { seconds: number; rssKib: number; devices: number }[] = [];
    for (let i = 0; i < runs; i++) {
      raw.push(await listRaw(hubUrl, token));
      cli.push(await fleetctl(dir, ['get', 'devices', '-o', 'json']));
    }
    for (const c of cli)
      if (c.devices !== count) throw new Error(`fleetctl printed ${c.devices} devices, not ${count}`);
    const startup = await fleetctl(dir, ['--help']);
    return {
      devices: count,
      get_devices_s: round(median(cli.map((c) => c.seconds))),
      peak_rss_mib: round(Math.max(...cli.map((c) => c.rssKib)) / 1024, 1),
      hub_list_s: round(median(raw)),
      fleetctl_startup_s: round(startup.seconds),
      page_size: pageSize,
      runs,
    };
  } finally {
    await stack.close();
  }
}

/** The same pages fleetctl asks for, fetched and parsed in this process; seconds. */
async function listRaw(hubUrl: string, token: string): Promise<number> {
  const started = performance.now();
  let cursor: string | null = null;
  let n = 0;
  do {
    const url = `${hubUrl}/v1/devices?limit=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    const page = (await res.json()) as { items: unknown[]; next_cursor: string | null };
    n += page.items.length;
    cursor = page.next_cursor;
  } while (cursor);
  if (n === 0) throw new Error('the hub listed no devices');
  return (performance.now() - started) / 1000;
}

/** One fleetctl run under GNU time: wall seconds, peak RSS, and how many devices its JSON holds. */
function fleetctl(dir: string, args: string[]): Promise<{ seconds: number; rssKib: number; devices: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      '/usr/bin/time',
      ['-f', 'maxrss_kib=%M', process.execPath, join(repoRoot, 'apps/cli/bin/fleetctl.mjs'), ...args],
      { cwd: dir, env: { ...process.env, FLEET_CONFIG: join(dir, 'config.yaml') }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) return reject(new Error(`fleetctl ${args.join(' ')}: exit ${code}\n${stderr}`));
      const rss = stderr.match(/maxrss_kib=(\d+)/);
      if (!rss) return reject(new Error(`no peak RSS from /usr/bin/time:\n${stderr}`));
      const text = Buffer.concat(out).toString();
      const devices = args[0] === 'get' ? (JSON.parse(text) as { items: unknown[] }).items.length : 0;
      resolve({ seconds, rssKib: Number(rss[1]), devices });
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const round = (n: number, digits = 3) => Number(n.toFixed(digits));

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, posix } from 'node:path';
import { gzipSync } from 'node:zlib';
import { recordPowerStates } from '@fleet/db';
import { EventStreamParser } from '../apps/web/src/api/sse.js';
import { repoRoot } from '../tools/lib/processes.js';
import { startSeededHub, type SeededHub } from './lib/seeded-hub.js';
import type * as Playwright from '../apps/web/node_modules/playwright-core/index.js';

// playwright-core is the web app's dev dependency, not the root's: load it from there.
const { chromium } = createRequire(join(repoRoot, 'apps/web/package.json'))('playwright-core') as typeof Playwright;

const distDir = join(repoRoot, 'apps', 'web', 'dist');
const loads = 5;
const viewport = { width: 1280, height: 800 };
const scrollMs = 3000;
const sseClients = 100;
const sseWrites = 50;
const writeSpacingMs = 100;
/** Issue 13's "Done when", printed next to the figures for comparison. */
const targets = {
  js_gzip_kib: '<= 300',
  overview_load_ms: '< 1500',
  rack_view_load_ms: '< 1500',
  sse_update_p95_ms: '< 500',
};

/**
 * The web console against a hub holding 10,000 devices: the initial bundle's gzipped JS; overview and rack
 * elevation load times in Chromium (navigation start to the view's data on screen, median of 5 fresh pages); the
 * virtualised device list's frame rate while scrolled top to bottom; and the hub's live-update fan-out: 100 SSE
 * clients, the time from a projection write's commit to its event at the last of them, and the hub's RSS.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const count = Number(args[0] ?? 10_000);
  if (!Number.isInteger(count) || count < 1) throw new Error(`device count must be a positive integer, not ${args[0]}`);
  if (!existsSync(join(distDir, 'index.html')))
    throw new Error('apps/web/dist is not built: run `pnpm --filter @fleet/web build` first');
  const bundle = initialBundle();
  console.log(`initial bundle: ${bundle.files.join(', ')}: ${bundle.gzipKib} KiB gzipped`);

  const stack = await startSeededHub({ name: 'web', devices: count });
  try {
    const page = await fetch(`${stack.url}/`, { headers: { accept: 'text/html' } });
    if (!page.ok || (await page.text()) !== readFileSync(join(distDir, 'index.html'), 'utf8'))
      throw new Error(`the hub does not serve apps/web/dist at / (HTTP ${page.status})`);
    const sites = (await api<{ items: { id: string }[] }>(stack, '/v1/sites')).items;
    const racks = (await api<{ items: { id: string; name: string; device_count?: number }[] }>(stack, '/v1/racks'))
      .items;
    const rack = racks.reduce((a, b) => ((b.device_count ?? 0) > (a.device_count ?? 0) ? b : a));
    console.log(`${count} devices in ${sites.length} sites, ${racks.length} racks; hub ${stack.url}`);

    const browser = await chromium.launch({
      executablePath: process.env['FLEET_CHROMIUM'] ?? '/usr/bin/chromium',
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    let views: Awaited<ReturnType<typeof measureViews>>;
    try {
      views = await measureViews(browser, stack, { count, sites: sites.length, rack });
    } finally {
      await browser.close();
    }

    const sse = await measureSse(stack);
    return {
      devices: count,
      js_gzip_kib: bundle.gzipKib,
      js_raw_kib: bundle.rawKib,
      js_initial_files: bundle.files,
      overview_load_ms: median(views.overview),
      rack_view_load_ms: median(views.rack),
      device_list_scroll_fps: views.scroll.fps,
      device_list_long_frames: views.scroll.longFrames,
      device_list_worst_frame_ms: views.scroll.worstFrameMs,
      device_list_scroll_s: views.scroll.seconds,
      sse_clients: sseClients,
      sse_writes: sseWrites,
      sse_update_p50_ms: sse.p50,
      sse_update_p95_ms: sse.p95,
      sse_update_max_ms: sse.max,
      hub_rss_mib_before_sse: sse.rssBeforeMib,
      hub_rss_mib_with_100_sse_clients: sse.rssWithMib,
      runs: {
        loads,
        overview_load_ms: views.overview,
        rack_view_load_ms: views.rack,
        rack: `${rack.name} (${rack.device_count} devices)`,
        warmup: 'one unmeasured load of each view first (hub query plans, Chromium start)',
      },
      targets,
    };
  } finally {
    await stack.close();
  }
}

/** The JS a first visit loads before any route: index.html's scripts and modulepreloads, and their static imports. */
function initialBundle(): { files: string[]; gzipKib: number; rawKib: number } {
  const html = readFileSync(join(distDir, 'index.html'), 'utf8');
  const queue: string[] = [];
  for (const [tag] of html.matchAll(/<(?:script|link)\b[^>]*>/g)) {
    const src = /\bsrc="([^"]+)"/.exec(tag)?.[1];
    const href = /\brel="modulepreload"/.test(tag) ? /\bhref="([^"]+)"/.exec(tag)?.[1] : undefined;
    if (src ?? href) queue.push(src ?? href!);
  }
  const seen = new Set<string>();
  let gzip = 0;
  let raw = 0;
  while (queue.length) {
    const url = queue.shift()!;
    if (seen.has(url)) continue;
    seen.add(url);
    const file = join(distDir, url);
    if (!existsSync(file)) throw new Error(`index.html loads ${url}, which is not in apps/web/dist`);
    const code = readFileSync(file);
    raw += code.length;
    gzip += gzipSync(code, { level: 9 }).length;
    // Static `import … from "./x.js"` / `export … from` / `import "./x.js"` load with the entry; import() does not.
    const text = code.toString();
    for (const m of text.matchAll(/\b(?:import|export)\s*(?:[\w$*{},\s]+?\s*from\s*)?["']([^"']+\.js)["']/g)) {
      const spec = m[1]!;
      const target = spec.startsWith('/') ? spec : posix.join(posix.dirname(url), spec);
      if (existsSync(join(distDir, target))) queue.push(target);
    }
  }
  return { files: [...seen], gzipKib: round(gzip / 1024, 2), rawKib: round(raw / 1024, 2) };
}

async function measureViews(
  browser: Playwright.Browser,
  stack: SeededHub,
  fleet: { count: number; sites: number; rack: { id: string; device_count?: number } },
) {
  // Every site's "Devices by role (n)" table, the n adding up to the fleet, and nothing on the page still loading.
  const overviewReady = `(() => {
    const main = document.querySelector('main');
    if (!main || main.querySelector('.loading') || /loading…/.test(main.textContent)) return false;
    let sites = 0, devices = 0;
    for (const caption of main.querySelectorAll('caption')) {
      const m = /^Devices by role \\((\\d+)\\)$/.exec(caption.textContent.trim());
      if (m) { sites++; devices += Number(m[1]); }
    }
    return sites === ${fleet.sites} && devices === ${fleet.count} && performance.now();
  })()`;
  // The front view holds a link per device of the rack.
  const rackReady = `(() => {
    const list = document.querySelector('ol[aria-label^="Front view of rack "]');
    if (!list || document.querySelector('main .loading')) return false;
    return list.querySelectorAll('li.slot a').length === ${fleet.rack.device_count ?? 0} && performance.now();
  })()`;
  const overviewUrl = `${stack.url}/`;
  const rackUrl = `${stack.url}/racks/${encodeURIComponent(fleet.rack.id)}`;

  await timedLoad(browser, stack, overviewUrl, overviewReady);
  await timedLoad(browser, stack, rackUrl, rackReady);
  const overview: number[] = [];
  const rack: number[] = [];
  for (let i = 0; i < loads; i++) {
    overview.push(await timedLoad(browser, stack, overviewUrl, overviewReady));
    rack.push(await timedLoad(browser, stack, rackUrl, rackReady));
  }
  console.log(`overview ${overview.join(', ')} ms; rack ${rack.join(', ')} ms`);
  return { overview, rack, scroll: await scrollDeviceList(browser, stack, fleet.count) };
}

/** A fresh context (no cache, no storage) signed in the way the sign-in form does it: the token in session storage. */
async function signedInPage(browser: Playwright.Browser, stack: SeededHub): Promise<Playwright.Page> {
  const context = await browser.newContext({ viewport });
  const [origin, token] = [JSON.stringify(stack.url), JSON.stringify(stack.token)];
  await context.addInitScript(`if (location.origin === ${origin}) sessionStorage.setItem('fleet.token', ${token});`);
  return context.newPage();
}

/** Milliseconds from navigation start to the first animation frame at which `ready` (a page expression) holds. */
async function timedLoad(browser: Playwright.Browser, stack: SeededHub, url: string, ready: string): Promise<number> {
  const page = await signedInPage(browser, stack);
  try {
    await page.goto(url, { waitUntil: 'commit' });
    // performance.now() in the page counts from its navigation start.
    const at = await page.waitForFunction(ready, undefined, { polling: 'raf', timeout: 120_000 });
    return round(Number(await at.jsonValue()), 1);
  } finally {
    await page.context().close();
  }
}

/** The device list with every device loaded, scrolled top to bottom over ~3 s, one scroll step per frame. */
async function scrollDeviceList(browser: Playwright.Browser, stack: SeededHub, count: number) {
  const page = await signedInPage(browser, stack);
  try {
    await page.goto(`${stack.url}/devices`);
    // The list loads a page of 500 as its end comes near: keep the end in view until the last page is in.
    await page.waitForFunction(
      `(() => {
        const scroller = document.querySelector('.vscroll');
        const table = document.querySelector('[role="table"][aria-label^="Devices ("]');
        if (!scroller || !table) return false;
        scroller.scrollTop = scroller.scrollHeight;
        return table.getAttribute('aria-label') === 'Devices (${count})';
      })()`,
      undefined,
      { polling: 'raf', timeout: 300_000 },
    );
    const result = (await page.evaluate(`(async () => {
      const scroller = document.querySelector('.vscroll');
      const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
      scroller.scrollTop = 0;
      await frame();
      await frame();
      const max = scroller.scrollHeight - scroller.clientHeight;
      let start = await frame(), previous = start, now = start, frames = 0, long = 0, worst = 0;
      while (now - start < ${scrollMs}) {
        scroller.scrollTop = Math.min(1, (now - start) / ${scrollMs}) * max;
        now = await frame();
        const gap = now - previous;
        previous = now;
        frames++;
        if (gap > 50) long++;
        worst = Math.max(worst, gap);
      }
      scroller.scrollTop = max;
      await frame();
      await frame();
      return {
        frames, elapsed: now - start, long, worst,
        lastRowShown: !!scroller.querySelector('[aria-rowindex="${count + 1}"]'),
        rowsInDom: scroller.querySelectorAll('[role="row"]').length,
      };
    })()`)) as {
      frames: number;
      elapsed: number;
      long: number;
      worst: number;
      lastRowShown: boolean;
      rowsInDom: number;
    };
    if (!result.lastRowShown) throw new Error('the device list did not show its last row after scrolling to the end');
    console.log(`device list: ${result.frames} frames in ${round(result.elapsed)} ms, ${result.rowsInDom} rows in DOM`);
    return {
      fps: round((result.frames * 1000) / result.elapsed, 1),
      longFrames: result.long,
      worstFrameMs: round(result.worst, 1),
      seconds: round(result.elapsed / 1000, 2),
    };
  } finally {
    await page.context().close();
  }
}

/**
 * 100 clients on GET /v1/events, then 50 power-state writes 100 ms apart, each in its own transaction the way the
 * workflow agent's projection writes them (recordPowerStates; the deferred trigger emits the event at commit).
 * Latency per write: from just before its COMMIT to the event's arrival at the last client.
 */
async function measureSse(stack: SeededHub) {
  const pid = stack.hub.pid;
  if (pid === undefined) throw new Error('the hub has no pid');
  const rssBeforeMib = rssMib(pid);
  const { rows } = await stack.db.$client.query<{ id: string; power_state: string }>(
    'select id, power_state from devices where deleted_at is null order by name limit $1',
    [sseWrites],
  );
  if (rows.length < sseWrites) throw new Error(`need ${sseWrites} devices for the SSE writes, have ${rows.length}`);
  const writes = rows.map((r) => ({ id: r.id, state: r.power_state === 'On' ? 'Off' : 'On' }));
  const writeOf = new Map(writes.map((w, i) => [w.id, i]));
  const committing: number[] = [];
  const received = writes.map(() => 0);
  const lastArrival = writes.map(() => 0);

  const abort = new AbortController();
  let opened = 0;
  const failures: string[] = [];
  const clients = Array.from({ length: sseClients }, (_, c) =>
    follow(
      stack,
      abort.signal,
      () => opened++,
      (event, at) => {
        if (event.event !== 'device') return;
        const data = JSON.parse(event.data) as { id: string; power_state: string };
        const i = writeOf.get(data.id);
        if (i === undefined || data.power_state !== writes[i]!.state) return;
        received[i]!++;
        lastArrival[i] = Math.max(lastArrival[i]!, at);
      },
    ).catch((err: unknown) => {
      if (!abort.signal.aborted) failures.push(`client ${c}: ${(err as Error).message}`);
    }),
  );
  try {
    await until(() => opened === sseClients || failures.length > 0, 'the SSE clients to connect', 60_000);
    if (failures.length) throw new Error(`SSE clients failed: ${failures.join('; ')}`);
    const rssOpenMib = rssMib(pid);
    const started = performance.now();
    for (let i = 0; i < writes.length; i++) {
      await sleep(started + i * writeSpacingMs - performance.now());
      const w = writes[i]!;
      await stack.db.transaction(async (tx) => {
        await recordPowerStates(tx, [{ deviceId: w.id, powerState: w.state, at: new Date() }]);
        committing[i] = performance.now();
      });
    }
    await until(
      () => received.every((n) => n >= sseClients) || failures.length > 0,
      'every write to reach every client',
      60_000,
    ).catch(() => undefined);
    const missing = received.reduce((sum, n) => sum + sseClients - n, 0);
    if (failures.length || missing)
      throw new Error(`${missing} events missing at the clients; failures: ${failures.join('; ') || 'none'}`);
    // Still all open: the higher of the hub's RSS once they connected and after it delivered 50 events to each.
    const rssWithMib = Math.max(rssOpenMib, rssMib(pid));
    const latencies = lastArrival.map((t, i) => t - committing[i]!).sort((a, b) => a - b);
    console.log(`SSE: ${writes.length} writes to ${sseClients} clients; RSS ${rssBeforeMib} → ${rssWithMib} MiB`);
    return {
      p50: round(percentile(latencies, 50), 1),
      p95: round(percentile(latencies, 95), 1),
      max: round(latencies.at(-1)!, 1),
      rssBeforeMib,
      rssWithMib,
    };
  } finally {
    abort.abort();
    await Promise.allSettled(clients);
  }
}

/** One client of the event stream, parsing it the way the console does; resolves when the stream ends. */
async function follow(
  stack: SeededHub,
  signal: AbortSignal,
  onOpen: () => void,
  onEvent: (event: { event: string; data: string }, at: number) => void,
): Promise<void> {
  const res = await fetch(`${stack.url}/v1/events`, {
    headers: { authorization: `Bearer ${stack.token}`, accept: 'text/event-stream' },
    signal,
  });
  if (!res.ok || !res.body) throw new Error(`GET /v1/events: HTTP ${res.status}`);
  const parser = new EventStreamParser();
  let first = true;
  // The hub subscribes a client before it writes the stream's first line (`retry:`): live from that chunk on.
  for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
    if (first) onOpen();
    first = false;
    const at = performance.now();
    for (const event of parser.push(chunk)) onEvent(event, at);
  }
  if (!signal.aborted) throw new Error('the hub ended the stream');
}

async function api<T>(stack: SeededHub, path: string): Promise<T> {
  const res = await fetch(`${stack.url}${path}`, { headers: { authorization: `Bearer ${stack.token}` } });
  if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Resident set size of a process, from /proc (Linux). */
function rssMib(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kib) throw new Error(`no VmRSS for process ${pid}`);
  return round(Number(kib) / 1024, 1);
}

async function until(check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round = (n: number, digits = 0) => Number(n.toFixed(digits));

// What the satellite's observer holds in its heap (docs/day2.md, "The observer's memory"): N simulated BMCs (the
// simulator in a child process, so its heap is not in the snapshot) read through observeSite's own code path (the
// activity under MockActivityEnvironment, a hub that serves the targets and takes every delivery), and a heap snapshot
// written after C cycles and a full GC. Open it in Chrome DevTools (Memory tab).
// Usage: node --expose-gc --import tsx apps/satellite/test/tools/observe-heap.ts [N=1000] [C=3] [out.heapsnapshot]
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { MockActivityEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import { SiteLimiter } from '@fleet/redfish';
import type { ObserveSiteInput } from '@fleet/domain';
import { createObserverActivities } from '../../src/activities/observe.js';
import type { DeviceActivityDeps } from '../../src/activities/context.js';
import type { HubObservations } from '../../src/observe/hub-observations.js';

const n = Number(process.argv[2] ?? 1000);
const cyclesWanted = Number(process.argv[3] ?? 3);
const out = process.argv[4] ?? '/tmp/observe.heapsnapshot';
const dir = mkdtempSync(join(tmpdir(), 'observe-heap-'));
const adminPort = 30_000 + Math.floor(Math.random() * 5000);
const bmcPort = adminPort + 5000;
writeFileSync(
  join(dir, 'sim.json'),
  JSON.stringify({
    log: { level: 'warn' },
    timeScale: 0.01,
    admin: { port: adminPort },
    generate: [
      { count: n, idPrefix: 'bmc-', firstAddress: '127.91.0.1', port: bmcPort, username: 'admin', password: 'pw' },
    ],
  }),
);
const sim = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    new URL('../../../../packages/simulators/src/main.ts', import.meta.url).pathname,
    '--config',
    join(dir, 'sim.json'),
  ],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
sim.stdout!.resume();
sim.on('exit', (code) => console.log(`simulator exited ${code}`));
for (;;) {
  const ok = await fetch(`http://127.0.0.1:${adminPort}/bmcs`).then(
    (r) => r.ok,
    () => false,
  );
  if (ok) break;
  await new Promise((r) => setTimeout(r, 1000));
}
console.log('simulator up');
const { items } = (await (await fetch(`http://127.0.0.1:${adminPort}/bmcs`)).json()) as { items: { url: string }[] };
const targets = items.map((b) => ({
  deviceId: randomUUID(),
  nodeType: 'compute_gb200_nvidia',
  bmcUrl: b.url,
  credentialRef: 'bmc/x',
}));
const log = pino({ level: 'silent' });
const hub = {
  targets: async () => targets.map((t) => ({ ...t })),
  deliver: async () => ({ unknown: [] }),
} as unknown as HubObservations;
const mib = (rss: number, heap: number) =>
  `rss ${(rss / 2 ** 20).toFixed(0)} MiB, heap ${(heap / 2 ** 20).toFixed(0)} MiB`;
let cycles = 0;
const peak = { rss: 0, heap: 0 };
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  peak.rss = Math.max(peak.rss, m.rss);
  peak.heap = Math.max(peak.heap, m.heapUsed);
}, 100);
let done: () => void;
const enough = new Promise<void>((r) => (done = r));
const activities = createObserverActivities({
  secrets: { resolve: async () => ({ username: 'admin', password: 'pw' }) },
  log,
  pollIntervalMs: 1000,
  journal: undefined as unknown as DeviceActivityDeps['journal'],
  redfish: {
    connectTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    siteLimiter: new SiteLimiter(256),
    logger: log,
  },
  hub,
  onCycle: ({ seconds, changes }) => {
    cycles++;
    const m = process.memoryUsage();
    console.log(`cycle ${cycles}: ${seconds.toFixed(1)} s, ${changes} changes, ${mib(m.rss, m.heapUsed)}`);
    if (cycles === cyclesWanted) done();
  },
});
const env = new MockActivityEnvironment();
const input: ObserveSiteInput = { siteId: 's', intervalS: 5, runForS: 3600, concurrency: 100, confirmations: 3 };
const running = env.run(activities.observeSite, input).catch(() => undefined);
await enough;
(globalThis as { gc?: () => void }).gc?.();
const m = process.memoryUsage();
console.log(`after gc: ${mib(m.rss, m.heapUsed)}`);
clearInterval(sampler);
console.log(`peak: ${mib(peak.rss, peak.heap)}`);
writeHeapSnapshot(out);
console.log(`wrote ${out}`);
env.cancel();
await running;
sim.kill();
process.exit(0);

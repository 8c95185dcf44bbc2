import { loadavg } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { siteObserverWorkflowId } from '@fleet/domain';
import { Stack } from '../test/harness/stack.js';
import { prepareStackBench } from './lib/environment.js';
import { FaultRotation } from './lib/fault-rotation.js';
import { hubRequestTimes } from './lib/hub-request-times.js';
import { eventsByType } from './lib/job-timeline.js';
import { ObservationCycles } from './lib/observation-cycles.js';
import { peakRssMiB } from './lib/proc-memory.js';
import { processCpu } from './lib/process-cpu.js';

/** Cycles per observeSite run: short runs, so the bench sees runs end and measures what each costs the history. */
const cyclesPerRun = 3;
/** BMCs whose Redfish request logs say what one healthy reading costs. */
const sampledBmcs = 20;
const round = (v: number, digits = 1) => Number(v.toFixed(digits));
const p95 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.95) - 1)] ?? NaN;
};
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

/**
 * Day-2 health observation at site scale (docs/day2.md): one satellite observes `devices` simulated GB200 compute trays
 * (10,000 by default) every `interval` seconds through the whole stack (agent-started observer workflow, satellite,
 * simulator, hub, Postgres) while 1% of the devices change each cycle (a GPU falls off the bus on the next 1%, the
 * previous 1% heal), so changes flow to the hub. After a warm-up (every device observed once), `cycles` cycles are
 * measured:
 *
 * - observation_cycle_s: p95 of the cycles' durations (target: ≤ interval_s), each exact from the satellite's cycle
 *   histogram polled between cycles;
 * - changes_per_cycle: readings delivered per cycle, outside a run's first cycle (a new observeSite run starts with
 *   nothing delivered, so its first cycle delivers every reading again: reported apart);
 * - history_events_per_hour: the observer workflow's history growth from its first run's end to its last's, scaled to
 *   an hour (target: < devices); runs here last `cyclesPerRun` cycles, so this is about 40 runs an hour, where the
 *   agent's default runForS (3600 s) makes one: then an hour costs history_events_per_run;
 * - hub_write_ms_p95: the hub's own time to store one delivery (its request log);
 * - satellite_rss_mib: the satellite's peak RSS (VmHWM) over the whole run;
 * - CPU seconds per process in the window, and the satellite's and simulator's per cycle (from one cycle's end to the
 *   next's, the wait between included): what a cycle costs whatever else a shared machine runs.
 *
 * Args: [devices=10000] [intervalS=30] [cycles=6] [concurrency=100].
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const devices = Number(args[0] ?? 10_000);
  const intervalS = Number(args[1] ?? 30);
  const windowCycles = Number(args[2] ?? 6);
  const concurrency = Number(args[3] ?? 100);
  const runForS = Math.max(10, intervalS * cyclesPerRun);
  const confirmations = 3;
  const faultsPerCycle = Math.max(1, Math.round(devices / 100));
  const cleanup = await prepareStackBench('observe');
  const stack = new Stack({
    // Measured as the trivial-workflow baseline runs: no codec; no leak scan of thousands of histories at the end.
    payloadEncryption: false,
    leakScan: false,
    // Many concurrent pollers share one token: the bench measures the stack, not the rate limit.
    rateLimit: { enabled: false },
    bmcs: devices,
    bulkRegister: true,
    observe: { intervalS, runForS, concurrency, confirmations },
    // A site's own Redfish timeouts (the satellite's defaults), not the stack's short test ones.
    redfish: { requestTimeoutMs: 30_000, connectTimeoutMs: 10_000 },
  });
  let connection: Connection | undefined;
  try {
    await stack.start();
    connection = await Connection.connect({ address: stack.temporal.address });
    const observer = new Client({ connection }).workflow.getHandle(siteObserverWorkflowId(stack.siteId));
    const waitMs = intervalS * 4_000 + 120_000;

    // Warm-up: every device observed (and stored by the hub) once.
    const warmupStarted = Date.now();
    for (;;) {
      const { rows } = await stack.dbHandle.pool.query<{ n: number }>(
        `select count(*)::int as n from device_health h join devices d on d.id = h.device_id where d.site_id = $1`,
        [stack.siteId],
      );
      if (rows[0]!.n >= devices) break;
      if (Date.now() - warmupStarted > 900_000) throw new Error(`${rows[0]!.n} of ${devices} devices observed`);
      await new Promise((r) => setTimeout(r, 2000));
    }
    const warmupS = (Date.now() - warmupStarted) / 1000;

    const cycles = new ObservationCycles(`http://127.0.0.1:${stack.metricsPort(stack.satellite)}/metrics`);
    await cycles.start();
    await cycles.waitFor(1, waitMs);
    // The window opens as a cycle ends.
    const t0 = Date.now();
    const bmcIds = stack.bmcs.map((b) => b.id);
    const sampled = bmcIds.slice(-sampledBmcs);
    const faults = new FaultRotation(stack.simAdminUrl, bmcIds.slice(0, -sampledBmcs), faultsPerCycle);
    const simLogs = (method: 'GET' | 'DELETE') =>
      Promise.all(
        sampled.map(async (id) => {
          const res = await fetch(`${stack.simAdminUrl}/bmcs/${id}/requests`, { method });
          return method === 'GET' ? ((await res.json()) as { items: { method: string; path: string }[] }).items : [];
        }),
      );
    await simLogs('DELETE');
    const load0 = loadavg()[0]!;
    const cpu = processCpu({
      satellite: stack.satellite.pid!,
      simulator: stack.simulator.pid!,
      hub: stack.hub.pid!,
      agent: stack.agent.pid!,
      temporal: stack.temporal.process.pid!,
      postgres: { comm: 'postgres' },
      bench: { pid: process.pid },
    });
    // The satellite's and simulator's CPU per cycle, read as each ends (within a poll of the end).
    const perCycle = () => processCpu({ satellite: stack.satellite.pid!, simulator: stack.simulator.pid! });
    const cycleCpu: Record<string, number>[] = [];
    await faults.rotate();
    for (let k = 2, c = perCycle(); k <= windowCycles + 1; k++) {
      await cycles.waitFor(k, waitMs);
      cycleCpu.push(c.stop());
      c = perCycle();
      if (k <= windowCycles) await faults.rotate();
    }
    const t1 = Date.now();
    const cpuS = cpu.stop();
    const load1 = loadavg()[0]!;
    cycles.stop();
    const windowS = (t1 - t0) / 1000;
    const requestLogs = await simLogs('GET');

    // The history from the first run's end to the last one's: what runs cost it, each run's own events whole (a
    // retried activity's started event is written when it ends, so counts cut at the window's edges would be off).
    const events = (await observer.fetchHistory()).events ?? [];
    const eventMs = (e: (typeof events)[number]) =>
      Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
    const completed = events.flatMap((e, i) => (e.eventType === 12 ? [i] : []));
    const runs = completed.length - 1;
    const [firstEnd, lastEnd] = [completed[0] ?? 0, completed.at(-1) ?? 0];
    const runEvents = events.slice(firstEnd + 1, lastEnd + 1);
    const runSpanS = runs > 0 ? (eventMs(events[lastEnd]!) - eventMs(events[firstEnd]!)) / 1000 : NaN;
    // Activity failed (13) or timed out (14): an observer run that did not end by itself.
    const failedRuns = events.filter((e) => e.eventType === 13 || e.eventType === 14).length;

    const window = cycles.samples.slice(1, windowCycles + 1);
    // A run's first cycle delivers every reading (nothing delivered yet in that run); the others only what changed.
    const isFirst = (c: { changes: number }) => c.changes >= devices / 2;
    const firstOfRun = window.filter(isFirst);
    const steady = window.filter((c) => !isFirst(c));
    const firstIdx = window.flatMap((c, i) => (isFirst(c) ? [i] : []));
    const steadyIdx = window.flatMap((c, i) => (isFirst(c) ? [] : [i]));
    const cpuOf = (idx: number[]) => (idx.length ? round(mean(idx.map((i) => cycleCpu[i]!['satellite']!)), 2) : null);
    const deliveryMs = (cs: typeof window) => {
      const n = cs.reduce((a, c) => a + c.deliveries, 0);
      return n ? round((cs.reduce((a, c) => a + c.deliveryS, 0) / n) * 1000) : null;
    };
    const readings = window.reduce((n, c) => n + c.changes * c.merged, 0);
    const deliveries = window.reduce((n, c) => n + c.deliveries, 0);

    const hubLog = stack.hub.output;
    const inWindow = (r: { at: number }) => r.at > t0 && r.at <= t1;
    const site = stack.siteId.replace(/[^a-z0-9-]/g, '');
    const writes = hubRequestTimes(hubLog, 'POST', new RegExp(`^/v1/sites/${site}/observations$`)).filter(inWindow);
    const targetPages = hubRequestTimes(hubLog, 'GET', new RegExp(`^/v1/sites/${site}/observation-targets`)).filter(
      inWindow,
    );

    // Every reading, healthy or not, reads the tray's chassis once; the other requests per reading are spread over it.
    const sampledRequests = requestLogs.flat();
    const reads = sampledRequests.filter((r) => r.path === '/redfish/v1/Chassis/BMC_0').length;
    const perPath: Record<string, number> = {};
    for (const r of sampledRequests) perPath[`${r.method} ${r.path}`] = (perPath[`${r.method} ${r.path}`] ?? 0) + 1;

    const { rows: health } = await stack.dbHandle.pool.query<{ unreachable: number; faulty: number }>(
      `select count(*) filter (where not h.reachable)::int as unreachable,
              count(*) filter (where jsonb_array_length(h.faults) > 0)::int as faulty
         from device_health h join devices d on d.id = h.device_id where d.site_id = $1`,
      [stack.siteId],
    );
    const warnings: Record<string, number> = {};
    for (const line of stack.satellite.output.split('\n')) {
      if (!line.startsWith('{')) continue;
      const l = JSON.parse(line) as { level: number; time: number; msg: string };
      if (l.level >= 40 && l.time > t0 && l.time <= t1) warnings[l.msg] = (warnings[l.msg] ?? 0) + 1;
    }

    const cycleS = p95(window.map((c) => c.seconds));
    const historyPerHour = runs > 0 ? Math.round((runEvents.length / runSpanS) * 3600) : null;
    const cycleCount = window.reduce((n, c) => n + c.merged, 0);
    const deviceReads = cycleCount * devices;
    return {
      devices,
      interval_s: intervalS,
      observation_cycle_s: round(cycleS, 2),
      observation_cycle_fits_interval: cycleS <= intervalS,
      observation_cycle_s_max: round(Math.max(...window.map((c) => c.seconds)), 2),
      observation_cycle_s_steady_p95: steady.length ? round(p95(steady.map((c) => c.seconds)), 2) : null,
      cycles: window.map((c, i) => ({
        s: round(c.seconds, 2),
        changes: Math.round(c.changes),
        deliveries: c.deliveries,
        satellite_cpu_s: cycleCpu[i]!['satellite'],
        simulator_cpu_s: cycleCpu[i]!['simulator'],
        ...(c.merged > 1 ? { merged: c.merged } : {}),
      })),
      changes_per_cycle: Math.round(mean(steady.map((c) => c.changes))),
      changes_per_cycle_first_of_run: firstOfRun.length ? Math.round(mean(firstOfRun.map((c) => c.changes))) : null,
      faults_moved_per_cycle: faultsPerCycle,
      history_events_per_hour: historyPerHour,
      history_events_per_hour_under_devices: historyPerHour !== null && historyPerHour < devices,
      history_events_per_run: runs > 0 ? round(runEvents.length / runs, 1) : null,
      history_events_by_type: eventsByType(runEvents),
      runs,
      run_s_mean: runs > 0 ? round(runSpanS / runs) : null,
      run_for_s: runForS,
      observer_failed_runs: failedRuns,
      hub_write_ms_p95: writes.length ? round(p95(writes.map((w) => w.ms))) : null,
      hub_write_ms_max: writes.length ? round(Math.max(...writes.map((w) => w.ms))) : null,
      hub_writes: writes.length,
      hub_write_failures: writes.filter((w) => w.status !== 200).length,
      // The satellite's side of a delivery: the hub's time plus the request's way there and back.
      satellite_delivery_ms_steady_mean: deliveryMs(steady),
      satellite_delivery_ms_first_of_run_mean: deliveryMs(firstOfRun),
      satellite_delivery_ms_mean: deliveryMs(window),
      readings_per_delivery: deliveries ? Math.round(readings / deliveries) : null,
      hub_target_page_ms_p95: targetPages.length ? round(p95(targetPages.map((r) => r.ms))) : null,
      satellite_rss_mib: peakRssMiB(stack.satellite.pid!),
      satellite_heap_mib_max: round(Math.max(...window.map((c) => c.heapMiB))),
      satellite_external_mib_max: round(Math.max(...window.map((c) => c.externalMiB))),
      satellite_open_fds_max: Math.max(...window.map((c) => c.openFds)),
      simulator_rss_mib: peakRssMiB(stack.simulator.pid!),
      redfish_requests_per_healthy_read: reads ? round(sampledRequests.length / reads, 2) : null,
      redfish_requests_per_healthy_read_by_path: Object.fromEntries(
        Object.entries(perPath).map(([path, n]) => [path, round(n / Math.max(1, reads), 2)]),
      ),
      window_s: round(windowS),
      window_cpu_s: cpuS,
      satellite_cpu_s_per_steady_cycle: cpuOf(steadyIdx),
      satellite_cpu_s_per_first_cycle_of_run: cpuOf(firstIdx),
      // CPU is what a cycle costs whatever else the machine runs (wall time is not, on a shared machine).
      cpu_s_per_cycle: Object.fromEntries(Object.entries(cpuS).map(([k, v]) => [k, round(v / cycleCount, 2)])),
      satellite_cpu_ms_per_device_read: round((cpuS['satellite']! * 1000) / deviceReads, 3),
      simulator_cpu_ms_per_device_read: round((cpuS['simulator']! * 1000) / deviceReads, 3),
      devices_unreachable_at_end: health[0]!.unreachable,
      devices_faulty_at_end: health[0]!.faulty,
      satellite_warnings: warnings,
      warmup_s: round(warmupS),
      concurrency,
      confirmations,
      loadavg_1m: { start: round(load0, 2), end: round(load1, 2) },
    };
  } finally {
    await connection?.close();
    await stack.stop();
    await cleanup();
  }
}

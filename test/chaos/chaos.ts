import { randomUUID } from 'node:crypto';
import type { Job as JobRow } from '@fleet/db';
import type { DeviceFirmwareResult } from '@fleet/domain';
import { WorkflowNotFoundError } from '@temporalio/client';
import { project } from '../../apps/workflow-agent/src/projector.js';
import { manifestFor, type Flash } from '../harness/firmware.js';
import { Stack } from '../harness/stack.js';
import {
  checkFlashes,
  checkInstalled,
  checkIntents,
  checkProjection,
  checkResets,
  terminalStates as terminal,
} from './checks.js';

/** The processes the suite kills; `netbox-agent` only with NetBox. */
export const chaosProcesses = ['hub', 'agent', 'netbox-agent', 'satellite', 'temporal', 'postgres'] as const;
export type ChaosProcess = (typeof chaosProcesses)[number];

export interface ChaosOptions {
  kills: number;
  seed: number;
  /** Racks whose compute trays the firmware campaign updates (18 each); one more rack runs power sequences. */
  campaignRacks: number;
  /** Racks into a real NetBox, mirrored by the NetBox agent (which is then killed too). */
  netbox: boolean;
  /** Pause between a process being healthy again and the next kill, milliseconds (uniform in the range). */
  gapMs: [number, number];
  /** How long a killed process stays down, milliseconds. */
  downMs: [number, number];
  /** Share of the devices that get BMC faults (reboots, hangs, 5xx, session exhaustion) during the run. */
  faultShare: number;
  /** Campaign concurrency cap per site. */
  concurrency: number;
  /** Seconds allowed after the last kill for every job to end. */
  settleS: number;
  log: (line: string) => void;
}

export const defaultChaosOptions: ChaosOptions = {
  kills: 100,
  seed: 1,
  campaignRacks: 28,
  netbox: true,
  gapMs: [500, 4_000],
  downMs: [100, 2_000],
  faultShare: 0.1,
  concurrency: 50,
  settleS: 900,
  log: (line) => console.error(line),
};

export interface ChaosReport {
  seed: number;
  kills: number;
  by_process: Partial<Record<ChaosProcess, number>>;
  /** Processes that died without being killed (restarted by the runner), by name. */
  unexpected_exits: Record<string, number>;
  devices: number;
  campaign_devices: number;
  campaigns: number;
  power_jobs: number;
  bmc_faults: number;
  intents: number;
  jobs: number;
  terminal_jobs: number;
  failed_jobs: number;
  lost_intents: number;
  /** Jobs of any kind (campaign and rack children included) still open after the settle deadline. */
  open_jobs: number;
  double_flashes: number;
  false_successes: number;
  duplicate_power_actions: number;
  projection_mismatches: number;
  /** How much evidence the checks read: flash log entries, accepted resets, workflows described. */
  evidence: { flashes: number; resets: number; workflows: number };
  /** The ids behind each non-zero count. */
  offenders: Record<string, string[]>;
  duration_s: number;
}

/** mulberry32: a small seeded generator, so one seed gives one kill and fault schedule. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Draws {
  rnd: () => number;
  /** An integer in [lo, hi]. */
  between: (range: [number, number]) => number;
  pick: <T>(xs: readonly T[]) => T;
}

function draws(rnd: () => number): Draws {
  return {
    rnd,
    between: ([lo, hi]) => lo + Math.floor(rnd() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(rnd() * xs.length)]!,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Logged = { at: string; method: string; path: string; status: number; body?: unknown };

/**
 * One chaos run: a stack of separate processes (private Postgres, Temporal on disk, hub, workflow agent, satellite,
 * NetBox agent, simulators), a firmware campaign over `campaignRacks` racks' compute trays and rack power sequences on
 * one more rack, while a seeded schedule kill -9s and restarts the processes and BMCs misbehave; then the end state is
 * checked from the simulators' logs, Postgres and Temporal (docs/chaos.md).
 */
export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  // A generator per schedule: the loops interleave as the processes' timing has it, each draws the same sequence.
  const killDraws = draws(seededRandom(o.seed));
  const faultDraws = draws(seededRandom(o.seed + 1_000_003));
  const powerDraws = draws(seededRandom(o.seed + 2_000_003));
  const stack = new Stack({
    racks: o.campaignRacks + 1,
    netbox: o.netbox,
    privatePostgres: true,
    persistentTemporal: true,
    timeScale: 0.005,
    pollIntervalMs: 100,
    power: { heartbeatTimeoutS: 5, settleTimeoutS: 60, maximumAttempts: 5 },
    firmware: { taskPollS: 0.2, pushDelayS: 0.2, acStabilizeS: 0.2, powerStateTimeoutS: 30, bmcRecoveryS: 60 },
    shutdownGraceTimeS: 2,
    // Hundreds of histories: the leak scan has its own tests.
    leakScan: false,
  });
  const report: ChaosReport = {
    seed: o.seed,
    kills: 0,
    by_process: {},
    unexpected_exits: {},
    devices: 0,
    campaign_devices: 0,
    campaigns: 0,
    power_jobs: 0,
    bmc_faults: 0,
    intents: 0,
    jobs: 0,
    terminal_jobs: 0,
    failed_jobs: 0,
    lost_intents: 0,
    open_jobs: 0,
    double_flashes: 0,
    false_successes: 0,
    duplicate_power_actions: 0,
    projection_mismatches: 0,
    evidence: { flashes: 0, resets: 0, workflows: 0 },
    offenders: {},
    duration_s: 0,
  };
  // Set when the run ends (or fails): the loops and the watcher stop, the checks read a still state.
  let done = false;
  // Set once every kill is done: the activity loops then start nothing new.
  const phase = { settled: false };
  let kills: KillSchedule | undefined;
  try {
    o.log(`chaos: starting a stack of ${(o.campaignRacks + 1) * 35} devices (seed ${o.seed})`);
    await stack.start();
    report.devices = stack.fleet!.devices.length;
    const powerRack = stack.fleet!.racks[0]!.name;
    const campaignRackNames = stack.fleet!.racks.slice(1).map((r) => r.name);
    const powerDevices = stack.fleet!.devices.filter((d) => d.rack === powerRack).map((d) => d.name);
    const campaignDevices = stack.fleet!.devices.filter((d) => d.rack !== powerRack && d.kind === 'compute');
    report.campaign_devices = campaignDevices.length;
    const pool = stack.dbHandle.pool;
    const query = async <T extends object>(sql: string, params: unknown[] = []): Promise<T[]> => {
      for (;;) {
        try {
          return (await pool.query<T>(sql, params)).rows;
        } catch (err) {
          if (done) throw err;
          await sleep(500); // Postgres is down for a moment
        }
      }
    };

    /** A hub request, again until answered (the hub or its database may be down): a POST keeps its key. */
    const hub = async (method: 'POST' | 'GET', path: string, body?: unknown): Promise<unknown> => {
      const headers: Record<string, string> = method === 'POST' ? { 'Idempotency-Key': randomUUID() } : {};
      for (let attempt = 0; ; attempt++) {
        try {
          const res = await stack.api(method, path, body, stack.tokens.operator, headers);
          if (res.status < 300) return res.body;
          if ((res.status < 500 && res.status !== 429) || attempt > 600)
            throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
        } catch (err) {
          if (!(err instanceof TypeError) || attempt > 600) throw err; // fetch failed: the hub is down
        }
        await sleep(500);
      }
    };
    const waitTerminal = async (jobId: string, deadline: number): Promise<string> => {
      for (;;) {
        const [row] = await query<{ state: string }>('select state from jobs where id = $1', [jobId]);
        if (row && terminal.has(row.state)) return row.state;
        if (Date.now() > deadline) return row?.state ?? 'missing';
        await sleep(300);
      }
    };

    // Firmware: a campaign, and another (the next version) whenever one ends before the kills do.
    const rackIds = campaignRackNames.map((n) => stack.rackIds.get(n)!);
    const campaignJobs: string[] = [];
    // A loop that fails (not from the run's end) fails the run once the kills are over.
    const loopErrors: string[] = [];
    const guard = (name: string, loop: Promise<void>) =>
      loop.catch((err: unknown) => {
        if (!done) loopErrors.push(`${name}: ${(err as Error).stack ?? String(err)}`);
      });
    const campaignLoop = guard(
      'campaigns',
      (async () => {
        for (let minor = 10; !done; minor++) {
          const version = `25.${minor}.0`;
          const manifest = await retry(() =>
            manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', version, {
              name: `chaos-${version}-${randomUUID()}`,
            }),
          );
          const job = (await hub('POST', '/v1/firmware-campaigns', {
            name: `chaos ${version}`,
            site_id: stack.siteId,
            rack_ids: rackIds,
            node_types: ['compute_gb200_nvidia'],
            manifests: { compute_gb200_nvidia: manifest.manifestId },
            policy: {
              canarySize: 1,
              autoApprove: true,
              waveSize: 100,
              maxConcurrentPerSite: o.concurrency,
              maxConcurrentPerRack: 18,
              failureBudget: 10_000,
            },
          })) as { id: string };
          campaignJobs.push(job.id);
          o.log(`chaos: campaign ${job.id} to ${version}`);
          await waitTerminal(job.id, Infinity);
          if (phase.settled) break;
        }
      })(),
    );

    // Rack power: on and off in turn on the power rack, each sequence after the last one ended.
    const powerRackId = stack.rackIds.get(powerRack)!;
    const powerJobs: string[] = [];
    const powerLoop = guard(
      'rack power',
      (async () => {
        for (let i = 0; !phase.settled; i++) {
          const job = (await hub('POST', `/v1/racks/${powerRackId}/power`, { op: i % 2 === 0 ? 'on' : 'off' })) as {
            id: string;
          };
          powerJobs.push(job.id);
          await waitTerminal(job.id, Infinity);
          await sleep(powerDraws.between([0, 2_000]));
        }
      })(),
    );

    // BMC faults on a seeded share of the devices, each for a seeded while.
    const { between, pick, rnd } = faultDraws;
    const faultable = [...campaignDevices.map((d) => d.name), ...powerDevices].filter(() => rnd() < o.faultShare);
    const faulted = new Set<string>();
    const setFaults = async (bmc: string, faults: Record<string, unknown>) => {
      const res = await fetch(`${stack.simAdminUrl}/bmcs/${bmc}/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(faults),
      });
      if (!res.ok) throw new Error(`faults of ${bmc}: HTTP ${res.status}`);
    };
    const faultLoop = guard(
      'BMC faults',
      (async () => {
        while (!phase.settled && faultable.length) {
          await sleep(between([200, 1_500]));
          const bmc = pick(faultable);
          if (faulted.has(bmc)) continue;
          const kind = pick(['reboot', 'hang', '5xx', 'sessions'] as const);
          const faults =
            kind === 'reboot'
              ? rnd() < 0.5
                ? { rebootDuringUpdate: true }
                : { rebootDuringUpload: true }
              : kind === 'hang'
                ? { hang: true }
                : kind === '5xx'
                  ? { errorRate: 0.3 + rnd() * 0.5, errorStatus: pick([500, 502, 503, 504]) }
                  : { sessionExhaustion: true };
          const forMs = between(kind === 'hang' ? [500, 8_000] : [1_000, 10_000]);
          faulted.add(bmc);
          report.bmc_faults++;
          await setFaults(bmc, faults);
          void sleep(forMs)
            .then(() => (done ? undefined : setFaults(bmc, {})))
            .catch((err: unknown) => o.log(`chaos: clearing the faults of ${bmc}: ${(err as Error).message}`))
            .finally(() => faulted.delete(bmc));
        }
      })(),
    );

    kills = killSchedule(stack, o, report, phase, killDraws);
    await kills.finished;
    o.log(`chaos: ${report.kills} kills done after ${Math.round((Date.now() - started) / 1000)} s; settling`);
    await faultLoop;
    for (const bmc of faultable) await setFaults(bmc, {});
    const settleBy = Date.now() + o.settleS * 1000;
    await Promise.race([Promise.all([powerLoop, campaignLoop]), sleep(o.settleS * 1000)]);
    if (loopErrors.length) throw new Error(`chaos run failed:\n${loopErrors.join('\n')}`);
    for (;;) {
      const [row] = await query<{ n: string }>(
        `select count(*) as n from jobs where state not in ('succeeded', 'failed', 'cancelled')`,
      );
      if (Number(row!.n) === 0 || Date.now() > settleBy) break;
      await sleep(1_000);
    }
    // The projector needs a cycle after the last workflow closed.
    await sleep(3_000);
    done = true;
    kills.stopWatching();
    await kills.idle();
    report.campaigns = campaignJobs.length;
    report.power_jobs = powerJobs.length;
    await checkEndState(stack, report, campaignDevices, powerDevices, powerJobs);
  } finally {
    done = phase.settled = true;
    kills?.stopWatching();
    await kills?.idle();
    report.duration_s = Math.round((Date.now() - started) / 1000);
    await stack.stop().catch((err: unknown) => o.log(`chaos: stack stop: ${(err as Error).message}`));
  }
  return report;
}

/** `fn` again on failure for a minute: hub calls made while a process is down. */
async function retry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 120) throw err;
      await sleep(500);
    }
  }
}

interface KillSchedule {
  finished: Promise<void>;
  stopWatching(): void;
  /** Resolves once no kill or restart is under way. */
  idle(): Promise<void>;
}

/**
 * The seeded kills, one at a time: a gap, kill -9 of a process, a pause, its restart and the wait until it is ready
 * again. Meanwhile a watcher restarts (and counts) any process that dies without being killed.
 */
function killSchedule(
  stack: Stack,
  o: ChaosOptions,
  report: ChaosReport,
  phase: { settled: boolean },
  { between, pick }: Draws,
): KillSchedule {
  const names = chaosProcesses.filter((p) => p !== 'netbox-agent' || stack.netboxAgent);
  const alive = (p: ChaosProcess): boolean => {
    if (p === 'postgres') return stack.postgres!.running;
    const child = p === 'temporal' ? stack.temporal.process : procOf(p).child;
    return !!child && child.exitCode === null && child.signalCode === null;
  };
  const procOf = (p: Exclude<ChaosProcess, 'postgres' | 'temporal'>) =>
    p === 'hub' ? stack.hub : p === 'agent' ? stack.agent : p === 'satellite' ? stack.satellite : stack.netboxAgent!;
  const kill = async (p: ChaosProcess) => {
    if (p === 'postgres') return stack.postgres!.kill();
    if (p === 'temporal') {
      const child = stack.temporal.process;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      return void (await exited);
    }
    return procOf(p).kill();
  };
  const restart = async (p: ChaosProcess) => {
    if (p === 'postgres') return stack.postgres!.start();
    if (p === 'temporal') return stack.startTemporal();
    if (p === 'satellite') return stack.startSatellite();
    if (p === 'agent') return stack.startAgent();
    if (p === 'hub') return stack.hub.start('hub listening');
    return stack.netboxAgent!.start('netbox agent started');
  };
  // One kill or restart at a time: the watcher and the schedule share it.
  let lock: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = lock.then(fn);
    lock = next.catch(() => undefined);
    return next;
  };
  let watching = true;
  void (async () => {
    while (watching) {
      await sleep(500);
      await exclusive(async () => {
        for (const p of names) {
          if (!watching || alive(p)) continue;
          o.log(`chaos: ${p} died unasked; restarting it`);
          report.unexpected_exits[p] = (report.unexpected_exits[p] ?? 0) + 1;
          await restart(p);
        }
      });
    }
  })();
  return {
    stopWatching: () => {
      watching = false;
    },
    idle: () => exclusive(async () => undefined),
    finished: (async () => {
      for (let i = 0; i < o.kills && watching; i++) {
        await sleep(between(o.gapMs));
        const p = pick(names);
        const down = between(o.downMs);
        await exclusive(async () => {
          const t0 = Date.now();
          await kill(p);
          await sleep(down);
          await restart(p);
          report.kills++;
          report.by_process[p] = (report.by_process[p] ?? 0) + 1;
          o.log(`chaos: kill ${i + 1}/${o.kills}: ${p}, back after ${Date.now() - t0} ms`);
        });
      }
      phase.settled = true;
    })(),
  };
}

/** The end-state checks, each from evidence: the simulators' logs, Postgres and Temporal. */
async function checkEndState(
  stack: Stack,
  report: ChaosReport,
  campaignDevices: { name: string }[],
  powerDevices: string[],
  powerJobs: string[],
): Promise<void> {
  const pool = stack.dbHandle.pool;
  const offend = (check: string, id: string) => (report.offenders[check] ??= []).push(id);

  // Every intent reached a terminal job.
  const intents = (
    await pool.query<{ id: string; job_id: string; state: string | null }>(
      'select i.id, i.job_id, j.state from intents i left join jobs j on j.id = i.job_id',
    )
  ).rows;
  report.intents = intents.length;
  checkIntents(intents, offend);
  report.lost_intents = report.offenders['lost_intents']?.length ?? 0;

  const jobs = (
    await pool.query<{
      id: string;
      kind: string;
      state: string;
      parent_id: string | null;
      device_id: string | null;
      run_id: string | null;
      result: DeviceFirmwareResult | null;
      created_at: Date;
      finished_at: Date | null;
    }>('select id, kind, state, parent_id, device_id, run_id, result, created_at, finished_at from jobs')
  ).rows;
  report.jobs = jobs.length;
  report.terminal_jobs = jobs.filter((j) => terminal.has(j.state)).length;
  report.failed_jobs = jobs.filter((j) => j.state === 'failed').length;
  for (const j of jobs) if (!terminal.has(j.state)) offend('open_jobs', `${j.id} ${j.kind} (${j.state})`);
  report.open_jobs = report.offenders['open_jobs']?.length ?? 0;

  // Firmware, from each simulated BMC's flash log and installed versions.
  const nameOf = new Map([...stack.deviceIds].map(([name, id]) => [id, name]));
  const sim = async <T>(bmc: string, what: string): Promise<T> =>
    (await (await fetch(`${stack.simAdminUrl}/bmcs/${bmc}/${what}`)).json()) as T;
  const firmwareJobs = jobs.filter((j) => j.kind === 'device.firmware_update');
  const byDevice = new Map<string, typeof firmwareJobs>();
  for (const j of firmwareJobs) byDevice.set(j.device_id!, [...(byDevice.get(j.device_id!) ?? []), j]);
  for (const d of campaignDevices) {
    const fw = await sim<{ flashes: (Flash & { at: string })[] }>(d.name, 'firmware');
    report.evidence.flashes += fw.flashes.length;
    checkFlashes(d.name, fw.flashes, byDevice.get(stack.deviceIds.get(d.name)!) ?? [], offend);
  }
  report.double_flashes = report.offenders['double_flashes']?.length ?? 0;
  // The last campaign's succeeded devices hold its versions now.
  const lastByDevice = new Map<string, (typeof firmwareJobs)[number]>();
  for (const j of firmwareJobs.sort((a, b) => a.created_at.getTime() - b.created_at.getTime()))
    lastByDevice.set(j.device_id!, j);
  for (const [deviceId, j] of lastByDevice) {
    if (j.state !== 'succeeded') continue;
    const name = nameOf.get(deviceId)!;
    checkInstalled(name, j, (await sim<{ items: { id: string; version: string }[] }>(name, 'firmware')).items, offend);
  }
  report.false_successes = report.offenders['false_successes']?.length ?? 0;

  // Power: at most one accepted reset per device per rack sequence, and none outside a sequence.
  const windows = jobs
    .filter((j) => powerJobs.includes(j.id))
    .map((j) => ({ id: j.id, from: j.created_at.getTime(), to: j.finished_at?.getTime() ?? Infinity }));
  for (const bmc of powerDevices)
    report.evidence.resets += checkResets(bmc, (await sim<{ items: Logged[] }>(bmc, 'actions')).items, windows, offend);
  report.duplicate_power_actions = report.offenders['duplicate_power_actions']?.length ?? 0;

  // Each job's projected state is its workflow's final state (jobs without a workflow of their own are skipped).
  await stack.withTemporal(async (client) => {
    for (const j of jobs) {
      let state: string | undefined;
      try {
        // The latest run (after any continue-as-new), read as the projector reads a listing.
        const wf = await client.workflow.getHandle(j.id).describe();
        report.evidence.workflows++;
        state = project({ id: j.id } as JobRow, { ...wf, raw: wf.raw.workflowExecutionInfo ?? {} })?.state;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        state = 'no-workflow';
      }
      checkProjection(j, state, offend);
    }
  });
  report.projection_mismatches = report.offenders['projection_mismatches']?.length ?? 0;
}

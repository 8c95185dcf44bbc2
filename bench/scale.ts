import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import {
  complianceSummary,
  connectDb,
  createApiToken,
  deviceListQuery,
  getOrCreateSyncState,
  readDeviceDetail,
  readRackDetail,
} from '@fleet/db';
import { cloneTestDatabase, prepareTemplate } from '@fleet/db/testing';
import { makespanLowerBound } from '@fleet/domain';
import { freePort } from '@fleet/temporal';
import { unwrap } from '@fleet/client';
import { createSyncMetrics, NetboxClient, NetboxSync } from '@fleet/netbox-agent';
import { planFleet } from '../tools/fleetgen/layout.js';
import { bulkLoadFleet, NetboxWriter } from '../tools/fleetgen/netbox-writer.js';
import { ManagedProcess, repoRoot } from '../tools/lib/processes.js';
import { startNetbox, type NetboxServer } from '../test/harness/netbox.js';
import { manifestFor } from '../test/harness/firmware.js';
import { Stack } from '../test/harness/stack.js';
import { hubHttp } from './lib/hub-http.js';
import { compareSides, type PageSide, type SideFigures } from './lib/page-load.js';
import { peakRssMiB } from './lib/proc-memory.js';
import { processCpu } from './lib/process-cpu.js';
import { ProcessWindow } from './lib/process-metrics.js';
import { bmcRequests } from './lib/bmc-requests.js';
import { benchFirmwareTimings, prepareStackBench } from './lib/environment.js';
import { batchLowerBound, fleetSlice, parseStages, projectionLag, racksPerSiteFor } from './lib/scale-plan.js';
import { actionsOf } from './firmware.js';
import { agentCycles } from './lib/agent-cycles.js';
import { percentile, workflowSegments } from './lib/job-timeline.js';

/** The hub list target of issue 20 (p99 of a filtered page of 100 under 50 clients). */
const listTargetMs = 50;

interface Options {
  stages: number[];
  sites: number;
  clients: number;
  requests: number;
  parts: Set<string>;
  parallel: boolean;
  /** Seconds the run may take: a stage projected to end later is not started (a limit of this machine). */
  budgetS: number;
  workflowDevices: number;
  workflowSites: number;
  campaignCap: number;
  workflowPhases: Set<string>;
  /**
   * How often the bench reads the campaigns' and the batch's jobs while waiting (`--status-poll-ms`, 2000): their
   * makespans come from finished_at, so a slower poll loses no precision and keeps the bench's own load (a
   * campaign's read counts its devices in Postgres) off the stack it measures.
   */
  statusPollMs: number;
  /** Simulated BMCs without Redfish query support (`--bmc-quirks noExpandQuery`): the member-by-member baseline. */
  bmcQuirks: { noExpandQuery?: boolean };
  /** The workflow agent's projection.sweepMaxDuty (`--sweep-max-duty`; the agent's default when absent). */
  sweepMaxDuty?: number;
  /** Simulator processes the workflow part's sites are dealt to (`--simulator-processes`; the cores by default). */
  simulatorProcesses: number;
  /**
   * Satellite processes the workflow part's sites are dealt to (`--satellite-processes`; the cores by default): several
   * sites' workers in one process, which issue 20 allows in the bench. Each process costs CPU of its own for the same
   * work (docs/scale.md); `--satellite-processes <sites>` runs one per site, as a deployment does.
   */
  satelliteProcesses: number;
}

function options(args: string[]): Options {
  const value = (name: string, fallback: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
  };
  const count = (name: string, fallback: string) => {
    const n = Number(value(name, fallback));
    if (!Number.isSafeInteger(n) || n < 1)
      throw new Error(`--${name}: a positive whole number, not ${value(name, fallback)}`);
    return n;
  };
  const budgetMin = Number(value('budget-min', 'Infinity'));
  if (!(budgetMin > 0)) throw new Error(`--budget-min: minutes above 0, not ${value('budget-min', '')}`);
  const parts = new Set(value('parts', 'fleet,workflows').split(','));
  for (const p of parts) if (p !== 'fleet' && p !== 'workflows') throw new Error(`--parts: fleet,workflows, not ${p}`);
  const workflowPhases = new Set(value('workflow-phases', 'campaign,batch').split(','));
  for (const p of workflowPhases)
    if (p !== 'campaign' && p !== 'batch') throw new Error(`--workflow-phases: campaign,batch, not ${p}`);
  const sweepMaxDuty = args.includes('--sweep-max-duty') ? Number(value('sweep-max-duty', '')) : undefined;
  if (sweepMaxDuty !== undefined && !(sweepMaxDuty > 0 && sweepMaxDuty <= 1))
    throw new Error(`--sweep-max-duty: a share of the time above 0 and at most 1, not ${value('sweep-max-duty', '')}`);
  const bmcQuirk = value('bmc-quirks', '');
  if (bmcQuirk && bmcQuirk !== 'noExpandQuery') throw new Error(`--bmc-quirks: noExpandQuery, not ${bmcQuirk}`);
  return {
    stages: parseStages(value('devices', '10000,50000,100000')),
    sites: count('sites', '10'),
    clients: count('clients', '50'),
    requests: count('requests', '1000'),
    parts,
    parallel: args.includes('--parallel'),
    budgetS: budgetMin * 60,
    workflowDevices: count('workflow-devices', '10000'),
    workflowSites: count('workflow-sites', '10'),
    campaignCap: count('campaign-cap', '50'),
    workflowPhases,
    statusPollMs: count('status-poll-ms', '2000'),
    bmcQuirks: bmcQuirk ? { noExpandQuery: true } : {},
    ...(sweepMaxDuty !== undefined ? { sweepMaxDuty } : {}),
    simulatorProcesses: count('simulator-processes', String(availableParallelism())),
    satelliteProcesses: count('satellite-processes', String(availableParallelism())),
  };
}

type Limit = { devices: number; what: string };

/**
 * Issue 20's fleet at scale. `pnpm bench scale [--devices 10000,50000,100000] [--sites 10] [--clients 50]
 * [--requests 1000] [--parts fleet,workflows] [--parallel] [--workflow-devices 10000] [--workflow-sites 10]
 * [--campaign-cap 50] [--workflow-phases campaign,batch] [--status-poll-ms 2000] [--bmc-quirks noExpandQuery]
 * [--sweep-max-duty 0.5] [--simulator-processes N] [--satellite-processes N] [--budget-min N]`
 * (docs/scale.md).
 *
 * fleet: the stages in order, each growing one NetBox (bulk loader) to the stage's size in whole NVL72 racks over
 * `sites` sites; the NetBox agent's initial sync into an empty mirror and its incremental after 100 changes; the hub
 * (its own process) against the repository's own statements straight on Postgres for a filtered page of 100, a device
 * detail, the compliance summary and a rack elevation under `clients` concurrent clients. A stage that fails or misses
 * the list target is the first limit; the stages after a failure are not run.
 *
 * workflows: once, a whole stack (Temporal, hub, workflow agent, satellites and simulators each a process per core
 * serving the sites dealt to it) with `workflow-devices` compute trays: a firmware campaign per site under a site cap
 * against the lower bound the caps allow, history events and Temporal Actions per device, where a sampled update's
 * time went (its workflow tasks' and activities' segments) and how full the device slots were; then a power batch
 * over all of them whose devices take long to power on, so every child workflow runs at once: the agent's projection
 * lag while they do, and the batch's makespan against its floor.
 */
const runStarted = Date.now();

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const o = options(args);
  const out: Record<string, unknown> = { sites: o.sites };
  const limits: Limit[] = [];
  const fleet = () => (o.parts.has('fleet') ? fleetStages(o, limits) : {});
  const flows = () => (o.parts.has('workflows') ? workflows(o, limits) : {});
  // --parallel runs both parts at once (a shorter run; each part's figures then carry the other's load).
  const [a, b] = o.parallel ? await Promise.all([fleet(), flows()]) : [await fleet(), await flows()];
  Object.assign(out, a, b, { parallel: o.parallel });
  // One figure per process kind, from whichever part ran it.
  for (const [key, part] of [
    ['peak_rss_mib', 'workflow_peak_rss_mib'],
    ['event_loop_lag_p99_ms', 'workflow_event_loop_lag_p99_ms'],
  ] as const) {
    const a = (out[key] ?? {}) as Record<string, number>;
    const b = (out[part] ?? {}) as Record<string, number>;
    out[key] = Object.fromEntries(
      [...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, Math.max(a[k] ?? 0, b[k] ?? 0)]),
    );
    delete out[part];
  }
  out['first_limit'] = limits[0] ?? null;
  out['limits'] = limits;
  return out;
}

async function fleetStages(o: Options, limits: Limit[]): Promise<Record<string, unknown>> {
  const databaseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const template = `fleet_bench_scale_fleet_${process.pid}`;
  await prepareTemplate(databaseUrl, template);
  const netbox = await startNetbox();
  const largest = o.stages[o.stages.length - 1]!;
  const plan = planFleet({
    sites: o.sites,
    racksPerSite: racksPerSiteFor(largest, o.sites),
    rackTypes: ['gb200_nvl72', 'gb300_nvl72'],
    firstAddress: '127.64.0.1',
  });
  const stages: Record<string, unknown>[] = [];
  let loadedRacks = 0;
  let last: { devices: number; s: number } | undefined;
  try {
    for (const size of o.stages) {
      // A stage costs about its size's share of the last one (bulk load and sync grow with the devices).
      const projectedS = last ? (last.s * size) / last.devices : 0;
      const leftS = o.budgetS - (Date.now() - runStarted) / 1000;
      if (projectedS > leftS) {
        limits.push({
          devices: size,
          what:
            `not run: projected ${projectedS.toFixed(0)} s from the last stage, ${Math.max(0, leftS).toFixed(0)} s ` +
            `left of the run's budget (load average ${loadavg()
              .map((l) => l.toFixed(1))
              .join(' ')})`,
        });
        break;
      }
      const stageStart = Date.now();
      const racksPerSite = racksPerSiteFor(size, o.sites);
      const slice = fleetSlice(plan, loadedRacks, racksPerSite);
      const t0 = Date.now();
      try {
        await bulkLoadFleet(netbox.db, slice, {
          managementProfile: 'redfish-https:443',
          credentialRef: 'bmc/default',
          nvos: { nvuePort: 8444, sshPort: 22 },
        });
      } catch (err) {
        limits.push({ devices: size, what: `NetBox bulk load: ${(err as Error).message.slice(0, 300)}` });
        break;
      }
      loadedRacks = racksPerSite;
      const loadS = (Date.now() - t0) / 1000;
      console.error(`scale: ${size} devices planned, NetBox loaded in ${loadS}s`);
      try {
        const stage: Record<string, unknown> = {
          netbox_load_s: loadS,
          ...(await fleetStage(o, netbox, databaseUrl, template)),
        };
        stages.push(stage);
        last = { devices: size, s: (Date.now() - stageStart) / 1000 };
        console.error(`scale: stage ${JSON.stringify(stage)}`);
        const [p99, raw] = [stage['list_p99_ms'] as number, stage['list_p99_raw_sql_ms'] as number];
        if (p99 >= listTargetMs)
          limits.push({
            devices: stage['devices'] as number,
            what:
              `hub list p99 ${p99} ms >= ${listTargetMs} ms (raw SQL p99 ${raw} ms` +
              `${raw >= listTargetMs ? ', over the target too: the machine, not the hub' : ''}; ` +
              `load average ${(stage['load_average'] as number[]).join(' ')})`,
          });
      } catch (err) {
        limits.push({ devices: size, what: (err as Error).message.slice(0, 300) });
        break;
      }
    }
  } finally {
    await netbox.stop(true).catch(() => undefined);
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`drop database if exists "${template}" with (force)`);
    await admin.end();
  }
  const final = stages[stages.length - 1];
  if (!final) return { stages };
  const rss = final['peak_rss_mib'] as Record<string, number>;
  return {
    devices: final['devices'],
    racks: final['racks'],
    netbox_sync_s: final['netbox_sync_s'],
    netbox_sync_requests: final['netbox_sync_requests'],
    netbox_incremental_requests: final['netbox_incremental_requests'],
    netbox_incremental_s: final['netbox_incremental_s'],
    list_p99_ms: final['list_p99_ms'],
    list_p99_raw_sql_ms: final['list_p99_raw_sql_ms'],
    detail_p99_ms: final['detail_p99_ms'],
    detail_p99_raw_sql_ms: final['detail_p99_raw_sql_ms'],
    compliance_summary_p99_ms: final['compliance_summary_p99_ms'],
    compliance_summary_p99_raw_sql_ms: final['compliance_summary_p99_raw_sql_ms'],
    elevation_p99_ms: final['elevation_p99_ms'],
    elevation_p99_raw_sql_ms: final['elevation_p99_raw_sql_ms'],
    peak_rss_mib: rss,
    event_loop_lag_p99_ms: final['event_loop_lag_p99_ms'],
    stages,
  };
}

/** The bytes of the files under `dir` (a file removed while it is counted counts nothing). */
function directoryBytes(dir: string): number {
  let bytes = 0;
  let entries;
  try {
    entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  } catch {
    return 0; // a pass's directory removed while it was listed: the next sample counts the next one
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    try {
      bytes += statSync(join(entry.parentPath, entry.name)).size;
    } catch {
      // removed at the end of its pass
    }
  }
  return bytes;
}

/** One stage: sync the NetBox as it now is into an empty mirror, then the hub's pages under load. */
async function fleetStage(
  o: Options,
  netbox: NetboxServer,
  databaseUrl: string,
  template: string,
): Promise<Record<string, unknown>> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const db = await cloneTestDatabase(databaseUrl, template);
    cleanups.unshift(() => db.drop());
    const handle = connectDb(db.url, 20);
    cleanups.unshift(() => handle.close());
    await getOrCreateSyncState(handle.db, 'netbox');
    // The agent's sync runs in this process, as in bench/inventory.ts: its heap and event-loop delay are watched here.
    const client = new NetboxClient(netbox.url, netbox.token, { pageSize: 500, timeoutMs: 300_000 });
    cleanups.unshift(() => client.close());
    // Each pass spools what it read here (a directory of its own): its size is sampled beside the heap.
    const spoolDir = join(repoRoot, '.run', 'bench-scale', 'netbox-spool');
    mkdirSync(spoolDir, { recursive: true });
    const sync = new NetboxSync({
      db: handle.db,
      client,
      log: pino({ level: 'silent' }),
      metrics: createSyncMetrics(new Registry(), () => undefined),
      settings: { intervalS: 30, fullSyncIntervalS: 3600, overlapS: 10, spoolDir },
    });
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    let heapMax = 0;
    let spoolMax = 0;
    const sampler = setInterval(() => {
      heapMax = Math.max(heapMax, process.memoryUsage().heapUsed);
      spoolMax = Math.max(spoolMax, directoryBytes(spoolDir));
    }, 250);
    const t0 = Date.now();
    const full = await sync.full();
    const fullS = (Date.now() - t0) / 1000;
    // The pass after a load re-reads the overlap window behind the watermark; the measured one follows 100 changes.
    await sync.incremental();
    const writer = new NetboxWriter(netbox.url, netbox.token);
    const ids = (
      await writer.call<{ results: { id: number }[] }>('GET', '/api/dcim/devices/?limit=100&ordering=-id&brief=1')
    ).results.map((r) => r.id);
    await writer.bulk(
      'PATCH',
      '/api/dcim/devices/',
      ids.map((id, i) => ({ id, serial: `SCALE-${Date.now()}-${i}` })),
    );
    const t1 = Date.now();
    const inc = await sync.incremental();
    const incS = (Date.now() - t1) / 1000;
    clearInterval(sampler);
    loop.disable();
    const devices = full.written['device'] ?? 0;
    console.error(`scale: ${devices} devices synced in ${fullS}s (${full.requests} requests), incremental ${incS}s`);
    if ((inc.written['device'] ?? 0) < 100)
      throw new Error(`the incremental sync wrote ${inc.written['device'] ?? 0} of 100 changed devices`);

    const dir = join(repoRoot, '.run', 'bench-scale');
    mkdirSync(dir, { recursive: true });
    const hubPort = await freePort();
    const hubConfig = join(dir, 'hub.json');
    writeFileSync(
      hubConfig,
      JSON.stringify({
        log: { level: 'info' },
        metrics: { port: 0 },
        database: { url: db.url, poolSize: 20 },
        http: { port: hubPort, allowPlainHttp: true },
        rateLimit: { enabled: false },
      }),
    );
    const hub = new ManagedProcess('hub', 'apps/hub/src/main.ts', hubConfig, dir);
    cleanups.unshift(() => hub.stop());
    await hub.start('hub listening');
    const hubWindow = new ProcessWindow(hub, 'fleet_hub');
    await hubWindow.start();
    const token = (await createApiToken(handle.db, 'bench-scale', 'viewer')).token;
    // A lean HTTP client loads the hub (bench/lib/hub-http.ts: the generated client's CPU would be taken from it).
    const http = hubHttp(`http://127.0.0.1:${hubPort}`, token, o.clients);
    cleanups.unshift(() => http.close());
    const rawPool = new pg.Pool({ connectionString: db.url, max: 20 });
    cleanups.unshift(() => rawPool.end());

    const sample = await rawPool.query<{ id: string; rack_id: string }>(
      'select id, rack_id from devices where deleted_at is null order by random() limit 1000',
    );
    const deviceIds = sample.rows.map((r) => r.id);
    const rackIds = [...new Set(sample.rows.map((r) => r.rack_id))];
    const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
    const servers = [{ name: 'hub', pid: hub.pid! }];

    // A filtered page of 100: compute trays of one site, by name.
    const query = { site_id: ['site-02'], role: ['compute-tray'], limit: 100 };
    const filters = { siteId: query.site_id, role: query.role };
    const statement = deviceListQuery(handle.db, { limit: query.limit + 1, sort: 'name', filters }).toSQL();
    const list: [PageSide, PageSide] = [
      {
        what: 'hub list',
        page: async () => (await http.get<{ items: unknown[] }>('/v1/devices', query)).items.length,
        servers,
      },
      {
        what: 'raw SQL list',
        page: async () => Math.min(query.limit, (await rawPool.query(statement.sql, statement.params)).rows.length),
      },
    ];
    // The detail, summary and elevation routes each run several repository statements: the raw side runs the same
    // ones (the same repository functions, over a pool of the hub's size) without HTTP, auth and view shaping.
    const detail: [PageSide, PageSide] = [
      {
        what: 'hub detail',
        page: async () => {
          const id = pick(deviceIds);
          return (await http.get<{ id: string }>(`/v1/devices/${id}`)).id === id ? 1 : 0;
        },
        servers,
      },
      {
        what: 'raw SQL detail',
        page: async () => ((await readDeviceDetail(handle.db, pick(deviceIds))) ? 1 : 0),
      },
    ];
    const summary: [PageSide, PageSide] = [
      {
        what: 'hub compliance summary',
        page: async () =>
          (await http.get<{ total: number }>('/v1/firmware/compliance/summary')).total === devices ? 1 : 0,
        servers,
      },
      {
        what: 'raw SQL compliance summary',
        page: async () => {
          const byStatus = await complianceSummary(handle.db, {});
          return Object.values(byStatus).reduce((a, b) => a + b, 0) === devices ? 1 : 0;
        },
      },
    ];
    const elevation: [PageSide, PageSide] = [
      {
        what: 'hub elevation',
        page: async () => (await http.get<{ elevation: unknown[] }>(`/v1/racks/${pick(rackIds)}`)).elevation.length,
        servers,
      },
      {
        what: 'raw SQL elevation',
        page: async () => (await readRackDetail(handle.db, pick(rackIds)))!.devices.length,
      },
    ];
    const measure = (sides: [PageSide, PageSide], expected: number, requests = o.requests, clients = o.clients) =>
      compareSides(sides, {
        requests,
        rounds: 2,
        clients,
        expected,
        admin: rawPool,
        database: db.name,
      }) as Promise<SideFigures[]>;
    const [hubList, rawList] = await measure(list, query.limit);
    const [hubDetail, rawDetail] = await measure(detail, 1);
    // The summary counts every device (a scan of the fleet each time): 100 requests from 10 clients keep a stage's
    // run time in bounds at 100,000 devices on two cores.
    const [hubSummary, rawSummary] = await measure(summary, 1, 100, Math.min(10, o.clients));
    const [hubElevation, rawElevation] = await measure(elevation, 35);
    const hubFigures = await hubWindow.stop();
    const errors = [hubList, rawList, hubDetail, rawDetail, hubSummary, rawSummary, hubElevation, rawElevation]
      .map((s) => s!.errors)
      .reduce((a, b) => a + b, 0);
    return {
      devices,
      racks: full.written['rack'] ?? 0,
      netbox_sync_s: Number(fullS.toFixed(1)),
      netbox_sync_requests: full.requests,
      netbox_incremental_requests: inc.requests,
      netbox_incremental_s: Number(incS.toFixed(2)),
      netbox_incremental_devices: inc.written['device'],
      list_p50_ms: hubList!.p50,
      list_p99_ms: hubList!.p99,
      list_p99_raw_sql_ms: rawList!.p99,
      detail_p99_ms: hubDetail!.p99,
      detail_p99_raw_sql_ms: rawDetail!.p99,
      compliance_summary_p99_ms: hubSummary!.p99,
      compliance_summary_p99_raw_sql_ms: rawSummary!.p99,
      elevation_p99_ms: hubElevation!.p99,
      elevation_p99_raw_sql_ms: rawElevation!.p99,
      request_errors: errors,
      peak_rss_mib: {
        hub: hubFigures.peakRssMiB,
        // The bench process, which ran the NetBox agent's sync (and holds the fleet plan).
        bench_with_netbox_sync: peakRssMiB(process.pid),
      },
      netbox_sync_heap_mib_max: Number((heapMax / 2 ** 20).toFixed(1)),
      netbox_sync_spool_mib_max: Number((spoolMax / 2 ** 20).toFixed(1)),
      event_loop_lag_p99_ms: {
        hub: hubFigures.eventLoopLagP99Ms,
        netbox_sync: Number((loop.percentile(99) / 1e6).toFixed(1)),
      },
      load_average: loadavg().map((l) => Number(l.toFixed(2))),
    };
  } finally {
    for (const c of cleanups) await c().catch(() => undefined);
  }
}

async function workflows(o: Options, limits: Limit[]): Promise<Record<string, unknown>> {
  const perSite = Math.ceil(o.workflowDevices / o.workflowSites);
  const cleanup = await prepareStackBench('scale');
  // Simulated time ×0.005: a 600 s flash takes 3 s. The satellite's activity slots (200, its default) and the
  // campaign's site cap bind: both lower bounds count waves of them.
  const timeScale = 0.005;
  const slots = 200;
  // A power-on of 8,000 s (40 s scaled): long enough that every batch child has started before the first ends.
  const powerOnS = 8000;
  const firmware = benchFirmwareTimings;
  const stack = new Stack({
    payloadEncryption: false,
    leakScan: false,
    rateLimit: { enabled: false },
    sites: o.workflowSites,
    bmcs: perSite,
    bulkRegister: true,
    simulatorPerSite: true,
    // By default a simulator process per core, not per site: each costs CPU of its own for the same requests
    // (docs/scale.md).
    simulatorProcesses: o.simulatorProcesses,
    // Likewise a satellite process per core, each running the workers of the sites dealt to it.
    satelliteProcesses: o.satelliteProcesses,
    bmcQuirks: o.bmcQuirks,
    timeScale,
    timings: { powerOnS },
    projectionIntervalMs: 1000,
    ...(o.sweepMaxDuty !== undefined ? { sweepMaxDuty: o.sweepMaxDuty } : {}),
    pollIntervalMs: 500,
    power: { heartbeatTimeoutS: 60, settleTimeoutS: 3600 },
    firmware,
  });
  const t0 = Date.now();
  try {
    await stack.start();
  } catch (err) {
    await stack.stop().catch(() => undefined);
    await cleanup();
    limits.push({ devices: perSite * o.workflowSites, what: `stack start: ${(err as Error).message.slice(0, 300)}` });
    return {};
  }
  const stackStartS = (Date.now() - t0) / 1000;
  const devices = perSite * o.workflowSites;
  console.error(`scale: stack with ${devices} devices up in ${stackStartS}s`);
  const connection = await Connection.connect({ address: stack.temporal.address });
  const temporal = new Client({ connection });
  const windows = [
    { kind: 'hub', w: new ProcessWindow(stack.hub, 'fleet_hub') },
    { kind: 'workflow_agent', w: new ProcessWindow(stack.agent, 'fleet_agent') },
    ...stack.satelliteProcesses.map((s) => ({ kind: 'satellite', w: new ProcessWindow(s, 'fleet_satellite') })),
  ];
  const out: Record<string, unknown> = {
    workflow_devices: devices,
    workflow_sites: o.workflowSites,
    simulator_processes: stack.simulators.length,
    satellite_processes: stack.satelliteProcesses.length,
    bmc_quirks: Object.keys(o.bmcQuirks),
    status_poll_ms: o.statusPollMs,
    // null: the agent's default (apps/workflow-agent/src/config.ts).
    sweep_max_duty: o.sweepMaxDuty ?? null,
    stack_start_s: stackStartS,
  };
  const part: WorkflowPart = { o, stack, temporal, perSite, devices, timeScale, slots, powerOnS, limits };
  try {
    for (const { w } of windows) await w.start();

    if (o.workflowPhases.has('campaign')) await campaignPhase(part, out);
    if (!o.workflowPhases.has('batch')) return out;
    if ((Date.now() - runStarted) / 1000 > o.budgetS)
      throw new Error("power batch not run: the campaign spent the run's budget");
    await batchPhase(part, out);
  } catch (err) {
    limits.push({ devices, what: (err as Error).message.slice(0, 300) });
  } finally {
    // Each process kind's peak RSS and worst event-loop p99 over the part, whatever ended it.
    const rss: Record<string, number> = {};
    const lagMs: Record<string, number> = {};
    for (const { kind, w } of windows) {
      const f = await w.stop().catch(() => undefined);
      if (!f) continue;
      rss[kind] = Math.max(rss[kind] ?? 0, f.peakRssMiB);
      lagMs[kind] = Math.max(lagMs[kind] ?? 0, f.eventLoopLagP99Ms);
    }
    // The largest simulator process (each serves the sites dealt to it).
    rss['simulator'] = Math.max(...stack.simulators.map((s) => peakRssMiB(s.pid!)));
    out['workflow_peak_rss_mib'] = rss;
    out['workflow_event_loop_lag_p99_ms'] = lagMs;
    await connection.close();
    await stack.stop();
    await cleanup();
  }
  return out;
}

/** What the workflow part's phases share: the stack at its size and the timings it runs with. */
interface WorkflowPart {
  o: Options;
  stack: Stack;
  temporal: Client;
  perSite: number;
  devices: number;
  timeScale: number;
  slots: number;
  powerOnS: number;
  limits: Limit[];
}

/**
 * A firmware campaign per site, all at once: makespan against the floor, CPU, history events and Actions, written
 * into `figures` as they are known (a later failure keeps the earlier ones).
 */
async function campaignPhase(part: WorkflowPart, figures: Record<string, unknown>): Promise<void> {
  const { o, stack, temporal, perSite, devices, timeScale, limits } = part;
  const operator = stack.client('operator');
  const firmware = benchFirmwareTimings;
  // The campaign: one per site (a campaign belongs to a site), all at once.
  await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.11.0', { isDefault: true });
  const policy = {
    canarySize: 0,
    autoApprove: true,
    waveSize: perSite,
    maxConcurrentPerSite: o.campaignCap,
    maxConcurrentPerRack: 18,
    maxConcurrentPerPowerDomain: 36,
    failureBudget: 10,
  };
  const campaignCpu = stackCpu(stack);
  const requestsBefore = await bmcRequests(stack);
  const started = Date.now();
  const campaigns = await Promise.all(
    stack.siteIds.map(async (site) => {
      const created = await unwrap(
        operator.POST('/v1/firmware-campaigns', { body: { name: `scale-${site}`, site_id: site, policy } }),
      );
      if (!('id' in created)) throw new Error('the campaign was planned, not started');
      return created.id;
    }),
  );
  const done = (await Promise.all(campaigns.map((id) => stack.waitForJob(id, 7_200_000, o.statusPollMs)))) as {
    state: string;
    finished_at: string;
    error?: unknown;
  }[];
  const failed = done.filter((d) => d.state !== 'succeeded');
  if (failed.length) throw new Error(`campaign ${failed[0]!.state}: ${JSON.stringify(failed[0]!.error)}`);
  const campaignS = (Math.max(...done.map((d) => Date.parse(d.finished_at))) - started) / 1000;
  const requests = (await bmcRequests(stack)) - requestsBefore;
  // Per device: two flashes, the push delay between them, a BMC reboot, stabilisation (as bench/firmware.ts).
  const perDeviceS = 2 * 600 * timeScale + firmware.pushDelayS + 120 * timeScale + firmware.acStabilizeS;
  const siteBound = makespanLowerBound(
    Array.from({ length: perSite }, (_, i) => ({
      deviceId: `d${i}`,
      rackId: null,
      powerDomain: `device:${i}`,
      nodeType: 'compute_gb200_nvidia',
    })),
    policy,
    () => perDeviceS,
  );
  // Sites run side by side: the fleet's floor is a site's.
  Object.assign(figures, {
    campaign_10k_makespan_s: Number(campaignS.toFixed(1)),
    campaign_10k_lower_bound_s: Number(siteBound.toFixed(1)),
    campaign_over_lower_bound: Number((campaignS / siteBound).toFixed(2)),
    campaign_cap_per_site: o.campaignCap,
    campaign_redfish_requests_per_device: Number((requests / devices).toFixed(1)),
    ...cpuFigures('campaign', campaignCpu, devices),
  });
  if (campaignS > 1.25 * siteBound)
    limits.push({
      devices,
      what: `campaign makespan ${campaignS.toFixed(0)} s > 1.25 x ${siteBound.toFixed(0)} s`,
    });
  console.error(`scale: campaign ${JSON.stringify(figures)}`);

  // History events per device from the listing; Actions from a sample of the device workflows' histories.
  let childEvents = 0;
  let childBusyMs = 0;
  let children = 0;
  const sampled: { workflowId: string; runId: string }[] = [];
  for await (const wf of temporal.workflow.list({
    query: `FleetJobKind = 'device.firmware_update'`,
    pageSize: 500,
  })) {
    childEvents += wf.historyLength ?? 0;
    if (wf.closeTime) childBusyMs += +wf.closeTime - +wf.startTime;
    if (children++ % Math.max(1, Math.floor(devices / 100)) === 0) sampled.push(wf);
  }
  let sampleActions = 0;
  const segments: Record<string, number>[] = [];
  for (const wf of sampled) {
    const events = (await temporal.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()).events ?? [];
    sampleActions += actionsOf(events as Record<string, unknown>[]);
    segments.push(workflowSegments(events));
  }
  let parentEvents = 0;
  let parentActions = 0;
  for (const id of campaigns)
    for await (const wf of temporal.workflow.list({ query: `WorkflowId = '${id}'` })) {
      parentEvents += wf.historyLength ?? 0;
      parentActions += actionsOf(
        ((await temporal.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()).events ?? []) as Record<
          string,
          unknown
        >[],
      );
    }
  Object.assign(figures, {
    history_events_per_device: Number(((childEvents + parentEvents) / devices).toFixed(1)),
    temporal_actions_per_device: Number(
      (sampleActions / Math.max(1, sampled.length) + parentActions / devices).toFixed(1),
    ),
    temporal_actions_sampled_devices: sampled.length,
    // Where a sampled update's time went (p50 per segment, s): the device time is in the activities' runs.
    campaign_update_segments_p50_s: Object.fromEntries(
      [...new Set(segments.flatMap((s) => Object.keys(s)))].map((k) => [
        k,
        p50s(segments.flatMap((s) => (s[k] === undefined ? [] : [s[k]]))),
      ]),
    ),
    // The device slots' busy share: every update's own time over (sites x cap x makespan); the rest is slots the
    // campaigns left empty (starting, refilling, draining before a continue-as-new, the last devices).
    campaign_slot_occupancy: Number((childBusyMs / (o.workflowSites * o.campaignCap * campaignS * 1000)).toFixed(3)),
  });
}

/** A power batch over every tray: makespan against the floor, CPU, and the projection lag while most run. */
async function batchPhase(part: WorkflowPart, figures: Record<string, unknown>): Promise<void> {
  const { stack, perSite, devices, timeScale, slots, powerOnS } = part;
  const operator = stack.client('operator');
  // The power batch: every tray on. Its children all run while the first wave of each site waits for power.
  const batchCpu = stackCpu(stack);
  // The cycle figures are a bonus: an agent whose metrics cannot be read does not stop the batch.
  const cycles = await agentCycles(`http://127.0.0.1:${stack.metricsPort(stack.agent)}/metrics`).catch(() => undefined);
  const batchStart = Date.now();
  const batch = await unwrap(
    operator.POST('/v1/power-batches', { body: { action: 'on', filter: { site_id: stack.siteIds } } }),
  );
  if (!('id' in batch)) throw new Error('the power batch waits for an approval');
  const batchDone = (await stack.waitForJob(batch.id, 7_200_000, part.o.statusPollMs)) as {
    state: string;
    finished_at: string;
  };
  if (batchDone.state !== 'succeeded') throw new Error(`power batch ${batchDone.state}`);
  const batchS = (Date.parse(batchDone.finished_at) - batchStart) / 1000;
  const batchCycles = (await cycles?.stop().catch(() => undefined)) ?? null;
  const batchBound = batchLowerBound(
    stack.siteIds.map(() => perSite),
    slots,
    powerOnS * timeScale,
  );
  const jobsDb = new pg.Client({ connectionString: stack.database.url });
  await jobsDb.connect();
  const rows = await jobsDb
    .query<{ started_at: Date; finished_at: Date; updated_at: Date }>(
      'select started_at, finished_at, updated_at from jobs where parent_id = $1 and finished_at is not null',
      [batch.id],
    )
    .finally(() => jobsDb.end());
  const batchChildren = rows.rows.map((r) => ({
    startedAt: new Date(r.started_at),
    finishedAt: new Date(r.finished_at),
    projectedAt: new Date(r.updated_at),
  }));
  // While at least 90% of the most that ran at once still ran: all the devices when the dispatch keeps up.
  const peakRunning = projectionLag(batchChildren, Infinity).peakRunning;
  const lag = projectionLag(batchChildren, Math.floor(0.9 * peakRunning));
  Object.assign(figures, {
    batch_10k_makespan_s: Number(batchS.toFixed(1)),
    batch_10k_lower_bound_s: batchBound,
    ...cpuFigures('batch', batchCpu, devices),
    projection_lag_p95_s_10k_running: lag.p95,
    projection_lag_p50_s_10k_running: lag.p50,
    projection_lag_jobs: lag.jobs,
    projection_lag_min_running: Math.floor(0.9 * peakRunning),
    batch_peak_running_workflows: lag.peakRunning,
    batch_agent_cycles: batchCycles,
  });
}

/** The median of values in ms, in seconds to the hundredth. */
const p50s = (ms: number[]) => Number((percentile(ms, 50) / 1000).toFixed(2));

/** CPU seconds from now on of each process kind of the stack (satellites and simulators summed), and Postgres's. */
function stackCpu(stack: Stack) {
  const window = processCpu({
    hub: stack.hub.pid!,
    workflow_agent: stack.agent.pid!,
    temporal: stack.temporal.process.pid!,
    postgres: { comm: 'postgres' },
    ...Object.fromEntries(stack.satelliteProcesses.map((s, i) => [`satellite/${i}`, s.pid!])),
    ...Object.fromEntries(stack.simulators.map((s, i) => [`simulator/${i}`, s.pid!])),
  });
  return () => {
    const byKind: Record<string, number> = {};
    for (const [name, s] of Object.entries(window.stop())) {
      const kind = name.split('/')[0]!;
      byKind[kind] = (byKind[kind] ?? 0) + s;
    }
    return Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, Number(v.toFixed(1))]));
  };
}

/**
 * Where a phase's CPU went: seconds per process kind and in all per device. On two cores, a phase whose CPU per
 * device times its devices exceeds twice its floor cannot meet the floor whatever the caps.
 */
function cpuFigures(phase: string, stop: () => Record<string, number>, devices: number) {
  const byKind = stop();
  const total = Object.values(byKind).reduce((a, b) => a + b, 0);
  return {
    [`${phase}_cpu_s`]: byKind,
    [`${phase}_cpu_ms_per_device`]: Number(((total * 1000) / devices).toFixed(1)),
  };
}

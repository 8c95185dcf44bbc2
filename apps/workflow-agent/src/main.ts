import { Connection } from '@temporalio/client';
import pg from 'pg';
import {
  configPathFromArgs,
  createLogger,
  errorText,
  exitOnHelp,
  handleShutdown,
  loadConfig,
  readTemporalTls,
  serviceUsage,
  startMetricsServer,
} from '@fleet/config';
import { connectDb } from '@fleet/db';
import { ensureSearchAttributes } from '@fleet/temporal';
import { openPayloadKeys } from '@fleet/temporal/codec';
import { AgentConfig, agentShutdownGraceS, fullSweepAtLeastEveryMs, waitingSweepEveryOf } from './config.js';
import { dispatchOnce } from './dispatcher.js';
import { createAgentMetrics } from './metrics.js';
import { checkObservers } from './observers.js';
import { Lookback, type QuickWindow } from './lookback.js';
import { reconcileOnce, sweepStep } from './projector.js';
import { readsQueuedDevices, sweepDelayMs } from './sweep-pacing.js';
import { checkSatellites, removeDrainedSites } from './satellites.js';
import { SlaWatch } from './sla-watch.js';
import { temporalClients } from './temporal-clients.js';
import { intentChannel } from '@fleet/db';

exitOnHelp(
  serviceUsage(
    'workflow-agent',
    'Turns intents into Temporal workflow starts and cancels, and projects workflow status back into Postgres.',
    'deploy/config/workflow-agent.example.json',
  ),
);
const configFile = configPathFromArgs();
const config = loadConfig(AgentConfig, configFile);
const temporalTls = readTemporalTls(config.temporal.tls, configFile);
const log = createLogger('workflow-agent', config.log.level);
const metricsServer = await startMetricsServer({ ...config.metrics, prefix: 'fleet_agent' });
const metrics = createAgentMetrics(metricsServer.registry);
const { db, close: closeDb } = connectDb(config.database.url, config.database.poolSize, (err) =>
  log.warn({ err: err.message }, 'idle Postgres connection lost'),
);

// Lazy: the agent starts, and keeps its intents, while Temporal is down.
const connection = Connection.lazy({ address: config.temporal.address, ...(temporalTls ? { tls: temporalTls } : {}) });
const { payloadEncryption } = config.temporal;
// Inputs, signals and memos are encrypted before they leave this process, with the keys of the site whose workflow
// they belong to (docs/security.md).
const clients = temporalClients(
  connection,
  config.temporal.namespace,
  payloadEncryption && (await openPayloadKeys(payloadEncryption)),
);
const client = clients.any;

let stopping = false;
/** Sleepers a new intent (the dispatch loop) or the shutdown (every loop) ends early. */
const sleepers = new Map<string, () => void>();
/** Loops woken while busy: their next sleep returns at once, so a notification during a cycle is not lost. */
const woken = new Set<string>();
const wake = (loop: string) => {
  const sleeper = sleepers.get(loop);
  if (sleeper) sleeper();
  else woken.add(loop);
};
const sleep = (loop: string, ms: number) =>
  new Promise<void>((resolve) => {
    if (woken.delete(loop) || ms <= 0 || stopping) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      sleepers.delete(loop);
      resolve();
    }
    sleepers.set(loop, done);
  });
let listener: pg.Client | undefined;

/** LISTEN for new intents so a POST is dispatched at once; polling remains the fallback. */
async function listenForIntents(): Promise<void> {
  while (!stopping) {
    const conn = (listener = new pg.Client({ connectionString: config.database.url }));
    try {
      await conn.connect();
      await conn.query(`listen ${intentChannel}`);
      conn.on('notification', () => wake('dispatch'));
      await new Promise((_, reject) =>
        conn.once('error', reject).once('end', () => reject(new Error('listener closed'))),
      );
    } catch (err) {
      if (!stopping) log.warn({ err: (err as Error).message }, 'intent listener lost; polling until it is back');
    } finally {
      await conn.end().catch(() => undefined);
    }
    if (!stopping) await sleep('listen', 2_000);
  }
}

async function ensureNamespace(): Promise<void> {
  while (!stopping) {
    try {
      await ensureSearchAttributes(connection, config.temporal.namespace);
      return;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cannot register search attributes yet; retrying');
      await sleep('namespace', 2_000);
    }
  }
}

async function dispatchLoop(): Promise<void> {
  while (!stopping) {
    let handled = 0;
    try {
      handled = await dispatchOnce({ db, clients, config, log, metrics });
    } catch (err) {
      log.error({ err: errorText(err) }, 'dispatch cycle failed');
    }
    if (handled < config.dispatch.batchSize) await sleep('dispatch', config.dispatch.idleIntervalMs);
  }
}

/** Settled once the first reconcile cycle (a full sweep) has ended, or the agent stops: sweeps follow it. */
let firstCycleEnded: () => void = () => undefined;
const firstCycle = new Promise<void>((resolve) => (firstCycleEnded = resolve));

/**
 * How far quick cycles look back: at least the configured visibility lag, at most a minute (the sweep, at least every
 * two minutes, writes what shows up later).
 */
const lookback = new Lookback(config.projection.visibilityLagMs, Math.max(config.projection.visibilityLagMs, 60_000));

/** The last quick (or first full) cycle that succeeded; the sweep reads where the quick windows have got to. */
let lastQuick: QuickWindow | undefined;

/** Quick cycles: what started or closed since the last one, one interval apart (the first one sweeps every job). */
async function reconcileLoop(): Promise<void> {
  const { intervalMs, pageSize } = config.projection;
  while (!stopping) {
    // The window starts where the last successful cycle started, less the lookback; after a failure it stays.
    const window = lastQuick ? lookback.windowAfter(lastQuick) : { start: Date.now(), from: -Infinity };
    const since = lastQuick ? new Date(window.from) : undefined;
    const end = metrics.reconcileSeconds.startTimer({ kind: since ? 'quick' : 'full' });
    try {
      const stats = await reconcileOnce({ db, client, log, metrics, pageSize }, since);
      if (stats.changed > 0) log.debug(stats, 'reconciled');
      if (lastQuick) lookback.quickCycle(lastQuick, stats.endCloses);
      metrics.lookbackSeconds.set(lookback.currentMs / 1000);
      lastQuick = window;
      firstCycleEnded();
    } catch (err) {
      log.warn({ err: errorText(err) }, 'reconcile cycle failed; will retry');
    } finally {
      end();
    }
    // Fixed rate: cycles start one interval apart (not an interval after the last one ended), so a workflow's change
    // reaches Postgres within one interval plus one cycle, and a slow cycle does not stretch the next wait.
    await sleep('reconcile', intervalMs - (Date.now() - window.start));
  }
}

/** Pages of open jobs a sweep reads between two looks at `stopping`; a failed step is taken again from its start. */
const sweepStepPages = 10;

/**
 * Sweeps of the open jobs, which carry running jobs' progress, in a loop of their own beside the quick cycles: at
 * thousands of open jobs a sweep is tens of visibility queries, and quick cycles (the state changes) must not wait for
 * it (docs/scale.md). One starts every sweepEvery intervals, or later when sweeps take long: they take at most
 * projection.sweepMaxDuty of the time (sweep-pacing.ts).
 */
async function sweepLoop(): Promise<void> {
  const { intervalMs, sweepEvery, pageSize } = config.projection;
  const waitingSweepEvery = waitingSweepEveryOf(config.projection);
  if (config.projection.sweepPagesPerCycle !== undefined)
    log.warn('projection.sweepPagesPerCycle is ignored: the sweep runs in a loop of its own (docs/operations.md)');
  await firstCycle;
  // Every waitingSweepEvery-th sweep also reads the campaigns' queued devices, and any sweep that must for them to be
  // read at least every ten minutes when sweeps are paused (sweep-pacing.ts). Whether one does is decided when it
  // starts from the first job and kept with its position, so a sweep taken up again after a failed step reads the
  // same jobs. The first cycle has just swept every open job, queued devices too.
  let completed = 1;
  const fresh = () => ({ after: undefined as string | undefined, open: 0, missed: 0, waiting: false });
  let sweep = fresh();
  const deps = { db, client, log, metrics, pageSize };
  const pacing = { periodMs: sweepEvery * intervalMs, maxDuty: config.projection.sweepMaxDuty };
  // Monotonic: a wall clock stepped back would hold the sweeps back as long.
  const now = () => performance.now();
  let last = { startedAt: now(), endedAt: now() };
  let queuedReadAt = last.startedAt;
  while (!stopping) {
    await sleep('sweep', sweepDelayMs(pacing, last, now()));
    const startedAt = now();
    if (sweep.after === undefined) {
      sweep.waiting = readsQueuedDevices(
        { completed, every: waitingSweepEvery },
        startedAt - queuedReadAt,
        startedAt - last.startedAt,
        fullSweepAtLeastEveryMs,
      );
      if (sweep.waiting) queuedReadAt = startedAt;
    }
    for (let ended = false; !ended && !stopping;) {
      const end = metrics.reconcileSeconds.startTimer({ kind: 'sweep' });
      try {
        // Where the quick windows had got to before this step listed: ends closed before it, that no quick cycle
        // listed, will not be listed by one (visibility showed them too late).
        const quickFrom = lastQuick?.from ?? -Infinity;
        const step = await sweepStep(deps, sweep.after, sweepStepPages, sweep.waiting);
        sweep.open += step.openJobs;
        sweep.missed += Lookback.passed(step.unseenEndCloses, quickFrom);
        if (step.after !== undefined) sweep.after = step.after;
        else {
          if (sweep.waiting) metrics.openJobs.set(sweep.open);
          metrics.sweepFoundEnds.inc(sweep.missed);
          lookback.sweepEnded(sweep.missed);
          metrics.lookbackSeconds.set(lookback.currentMs / 1000);
          sweep = fresh();
          completed++;
          ended = true;
        }
      } catch (err) {
        metrics.sweepStepErrors.inc();
        log.warn({ err: errorText(err) }, 'projection sweep step failed; will take it again');
        ended = true;
      } finally {
        end();
      }
    }
    last = { startedAt, endedAt: now() };
  }
}

/** Every site's health observer runs with the config's settings (docs/day2.md); checked again every checkEveryS. */
async function observerLoop(): Promise<void> {
  while (!stopping) {
    try {
      const { started, updated, stopped } = await checkObservers({
        db,
        clients,
        log,
        metrics,
        config: config.observation,
      });
      if (started.length + updated.length + stopped.length)
        log.info({ started, updated, stopped }, 'observers checked');
    } catch (err) {
      log.warn({ err: errorText(err) }, 'observer check failed; will retry');
    }
    await sleep('observers', config.observation.checkEveryS * 1000);
  }
}

/** Satellite liveness and drained-site removal (docs/deployment.md, "Sites"), every sites.checkEveryS. */
async function siteLoop(): Promise<void> {
  const deps = { db, client, namespace: config.temporal.namespace, log, metrics };
  while (!stopping) {
    // Removal needs no Temporal: a failed liveness check does not hold it up.
    await removeDrainedSites(deps).catch((err: unknown) =>
      log.warn({ err: errorText(err) }, 'site removal check failed; will retry'),
    );
    await checkSatellites(deps).catch((err: unknown) =>
      log.warn({ err: errorText(err) }, 'satellite liveness check failed; will retry'),
    );
    await sleep('sites', config.sites.checkEveryS * 1000);
  }
}

/** Stuck-state SLAs (docs/sla.md): watch passes and webhook deliveries, each run when it is due. */
async function slaLoop(): Promise<void> {
  const watch = new SlaWatch({ db, log, metrics, config: config.sla, shouldStop: () => stopping });
  while (!stopping && config.sla.enabled) await sleep('sla', await watch.run());
}

void listenForIntents();
// Not behind Temporal: jobs stuck queued while Temporal is down are among what it reports.
const slaRun = slaLoop();
// The loops start once Temporal has the search attributes; a shutdown before then has no cycle to wait for.
let loops: Promise<unknown> = Promise.resolve();
void ensureNamespace().then(() => {
  if (!stopping) loops = Promise.all([dispatchLoop(), reconcileLoop(), sweepLoop(), observerLoop(), siteLoop()]);
});
handleShutdown({
  name: 'workflow agent',
  log,
  graceS: agentShutdownGraceS,
  drain: async () => {
    stopping = true;
    for (const done of [...sleepers.values()]) done();
    firstCycleEnded();
    await listener?.end().catch(() => undefined);
    await loops; // each loop finishes its current cycle
    await slaRun;
    await connection.close().catch(() => undefined);
    await closeDb();
    await metricsServer.close();
  },
});
// Logged once a signal would stop it cleanly: the dev stack and tests start sending signals from here.
log.info(
  { temporal: config.temporal.address, temporalTls: Boolean(temporalTls), metricsPort: metricsServer.port },
  'workflow agent started',
);

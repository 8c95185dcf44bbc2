import { readFileSync } from 'node:fs';
import {
  configPathFromArgs,
  createLogger,
  errorText,
  exitOnHelp,
  handleShutdown,
  loadConfig,
  serviceUsage,
  startMetricsServer,
} from '@fleet/config';
import { connectDb, getOrCreateSyncState, updateSyncState } from '@fleet/db';
import { NetboxAgentConfig, netboxAgentShutdownGraceS } from './config.js';
import { createSyncMetrics } from './metrics.js';
import { NetboxClient, NetboxError } from './netbox-client.js';
import type { NbDeviceType } from './netbox-types.js';
import { Spool } from './spool.js';
import { NetboxSync, scope } from './sync.js';

exitOnHelp(
  serviceUsage(
    'netbox-agent',
    'Mirrors NetBox (sites, racks, devices, interfaces, addresses) into Postgres.',
    'deploy/config/netbox-agent.example.json',
  ),
);
const config = loadConfig(NetboxAgentConfig, configPathFromArgs());
const log = createLogger('netbox-agent', config.log.level).child({ netbox: config.netbox.url });
try {
  const removed = await Spool.prepare(config.sync.spoolDir);
  if (removed.length) log.warn({ removed }, 'removed the spools of NetBox passes a stopped agent left behind');
} catch (err) {
  log.fatal({ err: errorText(err) }, 'sync.spoolDir is not usable: a pass could not keep what it reads from NetBox');
  process.exit(1);
}
const { db, close: closeDb } = connectDb(config.database.url, config.database.poolSize, (err) =>
  log.warn({ err: err.message }, 'idle Postgres connection lost'),
);
let lastSuccess: Date | undefined = (await getOrCreateSyncState(db, scope)).lastSuccessAt ?? undefined;
const metricsServer = await startMetricsServer({ ...config.metrics, prefix: 'fleet_netbox_agent' });
const metrics = createSyncMetrics(metricsServer.registry, () => lastSuccess);

let stopping = false;
let wake: (() => void) | undefined;
const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    wake = () => (clearTimeout(t), resolve());
  });

let failures = 0;
// Kept across cycles so an incremental sync only asks NetBox for changed device types.
const deviceTypes = new Map<number, NbDeviceType>();
let lastFull = (await getOrCreateSyncState(db, scope)).lastFullSyncAt?.getTime() ?? 0;
const loop = syncLoop();
handleShutdown({
  name: 'netbox agent',
  log,
  // A sync runs in one transaction: one cut short by the hard exit rolls back and the next start redoes it.
  graceS: netboxAgentShutdownGraceS,
  drain: async () => {
    stopping = true;
    wake?.();
    await loop; // the current sync finishes
    await closeDb();
    await metricsServer.close();
  },
});
// Logged once a signal would stop it cleanly: the dev stack and tests start sending signals from here.
log.info({ metricsPort: metricsServer.port, sites: config.sync.sites ?? 'all' }, 'netbox agent started');

async function syncLoop(): Promise<void> {
  while (!stopping) {
    // The token is read on every cycle: rotating the file needs no restart.
    const client = new NetboxClient(
      config.netbox.url,
      readFileSync(config.netbox.tokenFile, 'utf8').trim(),
      config.netbox,
    );
    const sync = new NetboxSync({ db, client, log, metrics, settings: config.sync }, deviceTypes);
    const full = Date.now() - lastFull > config.sync.fullSyncIntervalS * 1000;
    const end = metrics.duration.startTimer({ mode: full ? 'full' : 'incremental' });
    try {
      const result = full ? await sync.full() : await sync.incremental();
      if (result.mode === 'full') lastFull = Date.now();
      lastSuccess = new Date();
      failures = 0;
      const changed =
        Object.values(result.written).some((n) => n > 0) || Object.values(result.deleted).some((n) => n > 0);
      log[changed || result.mode === 'full' ? 'info' : 'debug'](result, 'netbox sync done');
    } catch (err) {
      failures++;
      const reason =
        err instanceof NetboxError
          ? err.authFailure
            ? 'auth'
            : err.status
              ? `http_${err.status}`
              : 'unreachable'
          : 'internal';
      metrics.errors.inc({ reason });
      // Whole (every line and cause, what Postgres says about the row), never the statement's parameters.
      const message =
        err instanceof NetboxError && err.authFailure
          ? `NetBox rejected the API token (${err.status}): ${err.causeText}`
          : errorText(err, { keys: true });
      // The mirror keeps serving its last state, marked stale; the agent keeps trying.
      await updateSyncState(db, scope, { lastAttemptAt: new Date(), lastError: message, stale: true }).catch(
        () => undefined,
      );
      log.error({ reason, failures, err: message }, 'netbox sync failed; serving the last state as stale');
    } finally {
      end();
      await client.close();
    }
    await updateSyncState(db, scope, { lastAttemptAt: new Date() }).catch(() => undefined);
    const backoffS =
      failures === 0 ? config.sync.intervalS : Math.min(300, config.sync.intervalS * 2 ** Math.min(failures, 8));
    await sleep(backoffS * 1000);
  }
}

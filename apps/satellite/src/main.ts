import type { Logger } from 'pino';
import { configPathsFromArgs, createLogger, exitOnHelp, handleShutdown, serviceUsage } from '@fleet/config';
import { siteTaskQueue } from '@fleet/domain';
import { installTemporalRuntime } from '@fleet/temporal/worker';
import { satelliteShutdownGraceS } from './config.js';
import { loadSiteConfigs } from './site-configs.js';
import { startSiteWorker, type SiteWorker } from './site-worker.js';

exitOnHelp(
  serviceUsage(
    'satellite',
    "The Temporal worker of one site (task queue site-<id>): every device's I/O. Each further --config starts " +
      "another site's worker in the same process, for benches and small labs only (docs/deployment.md).",
    'deploy/config/satellite.example.json',
  ),
);
const siteConfigs = loadSiteConfigs(configPathsFromArgs());
const configs = siteConfigs.map((s) => s.config);
const single = configs.length === 1;
// Process-wide lines at the first file's level; each site's lines (the SDK's included) at its own.
const root = createLogger('satellite', configs[0]!.log.level);
const log = root.child(
  single
    ? { siteId: configs[0]!.siteId, taskQueue: siteTaskQueue(configs[0]!.siteId) }
    : { siteIds: configs.map((c) => c.siteId) },
);
const siteLogs = new Map<string, Logger>(
  configs.map((c) => {
    const taskQueue = siteTaskQueue(c.siteId);
    return [taskQueue, single ? log : root.child({ siteId: c.siteId, taskQueue }, { level: c.log.level })];
  }),
);
installTemporalRuntime(log, (taskQueue) => siteLogs.get(taskQueue));

const sites: SiteWorker[] = [];
let stopping = false;
let startFailure: unknown;
let starting: Promise<void> = Promise.resolve();
const shutdown = handleShutdown({
  name: 'satellite worker',
  log,
  graceS: Math.max(...configs.map(satelliteShutdownGraceS)),
  drain: async () => {
    // No further site starts. The running sites drain together at once (each one's activities get their grace at the
    // same time); one starting now drains when it has started.
    stopping = true;
    const drains = sites.map((site) => site.drain());
    await starting;
    drains.push(...sites.slice(drains.length).map((site) => site.drain()));
    const results = await Promise.allSettled(drains);
    if (startFailure) throw startFailure;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  },
});
starting = (async () => {
  for (const siteConfig of siteConfigs) {
    if (stopping) return;
    const site = await startSiteWorker(siteConfig, siteLogs.get(siteTaskQueue(siteConfig.config.siteId))!);
    sites.push(site);
    // A worker that ends on its own (a fatal SDK error) stops the process too; drain rethrows its error (exit 1).
    void site.running.catch(() => undefined).then(() => shutdown.begin(`worker of site ${site.siteId} ended`));
  }
})().catch((err: unknown) => {
  startFailure = err;
});
await starting;
if (startFailure) {
  // The sites already running drain (their activities get their grace) before the process exits 1.
  log.error({ err: startFailure }, 'a site worker failed to start');
  void shutdown.begin('start-up failed');
} else if (!stopping) {
  // Logged once a signal would stop it cleanly: the dev stack and tests start sending signals from here.
  log.info(
    { metricsPorts: sites.map((s) => s.metricsPort), metricsPort: sites[0]!.metricsPort },
    'satellite worker started',
  );
}

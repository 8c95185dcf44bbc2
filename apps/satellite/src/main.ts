import {
  ConfigError,
  configPathsFromArgs,
  createLogger,
  exitOnHelp,
  handleShutdown,
  loadConfig,
  serviceUsage,
} from '@fleet/config';
import { siteTaskQueue } from '@fleet/domain';
import { installTemporalRuntime } from '@fleet/temporal/worker';
import { SatelliteConfig, satelliteShutdownGraceS } from './config.js';
import { sharedProcessProblems } from './shared-process.js';
import { startSiteWorker, type SiteWorker } from './site-worker.js';

exitOnHelp(
  serviceUsage(
    'satellite',
    "The Temporal worker of one site (task queue site-<id>): every device's I/O. Each further --config starts " +
      "another site's worker in the same process, for benches and small labs only (docs/deployment.md).",
    'deploy/config/satellite.example.json',
  ),
);
const configFiles = configPathsFromArgs();
const configs = loadConfigs(configFiles);
const log = createLogger('satellite', configs[0]!.log.level).child(
  configs.length === 1
    ? { siteId: configs[0]!.siteId, taskQueue: siteTaskQueue(configs[0]!.siteId) }
    : { siteIds: configs.map((c) => c.siteId) },
);
installTemporalRuntime(log);

const sites: SiteWorker[] = [];
const shutdown = handleShutdown({
  name: 'satellite worker',
  log,
  graceS: Math.max(...configs.map(satelliteShutdownGraceS)),
  // Sites drain together: each one's running activities get their grace at the same time.
  drain: async () => {
    const results = await Promise.allSettled(sites.map((site) => site.drain()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  },
});
for (const [i, config] of configs.entries()) {
  const siteLog =
    configs.length === 1 ? log : log.child({ siteId: config.siteId, taskQueue: siteTaskQueue(config.siteId) });
  const site = await startSiteWorker(config, configFiles[i]!, siteLog);
  sites.push(site);
  // A worker that ends on its own (a fatal SDK error) stops the process too; drain rethrows its error (exit 1).
  void site.running.catch(() => undefined).then(() => shutdown.begin(`worker of site ${site.siteId} ended`));
}
// Logged once a signal would stop it cleanly: the dev stack and tests start sending signals from here.
log.info(
  { metricsPorts: sites.map((s) => s.metricsPort), metricsPort: sites[0]!.metricsPort },
  'satellite worker started',
);

/** Every file's config, every problem of every file listed at once; several files must not share a site or a path. */
function loadConfigs(files: string[]): SatelliteConfig[] {
  const problems: string[] = [];
  const loaded: SatelliteConfig[] = [];
  for (const file of files) {
    try {
      loaded.push(loadConfig(SatelliteConfig, file));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems.map((p) => (files.length === 1 ? p : `${file}: ${p}`)));
    }
  }
  if (!problems.length) problems.push(...sharedProcessProblems(files, loaded));
  if (problems.length) throw new ConfigError(files.join(', '), problems);
  return loaded;
}

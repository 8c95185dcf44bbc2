import {
  configPathFromArgs,
  createLogger,
  exitOnHelp,
  handleShutdown,
  loadConfig,
  serviceUsage,
  startMetricsServer,
} from '@fleet/config';
import { connectDb } from '@fleet/db';
import { buildHub } from './app.js';
import { HubConfig } from './config.js';
import { FileBlobStore } from './firmware/blob-store.js';

exitOnHelp(serviceUsage('hub', 'The Fleet REST API over Postgres.', 'deploy/config/hub.example.json'));
const config = loadConfig(HubConfig, configPathFromArgs());
const log = createLogger('hub', config.log.level);
const metrics = await startMetricsServer({ ...config.metrics, prefix: 'fleet_hub' });
const { db, close: closeDb } = connectDb(config.database.url, config.database.poolSize, (err) =>
  log.warn({ err: err.message }, 'idle Postgres connection lost'),
);
const blobs = new FileBlobStore(config.firmware.blobDir);
const swept = await blobs.sweepStaleTemp();
if (swept.length) log.info({ files: swept }, 'removed temp files of uploads a previous hub left unfinished');
const app = buildHub({
  db,
  log,
  registry: metrics.registry,
  views: { temporalUiUrl: config.temporalUiUrl, temporalNamespace: config.temporalNamespace },
  firmware: { blobs, maxPackageBytes: config.firmware.maxPackageBytes },
  campaigns: config.campaigns,
  remediation: config.remediation,
  twoPerson: config.twoPerson,
  retention: config.retention,
  web: config.web,
});
await app.listen({ host: config.http.host, port: config.http.port });

handleShutdown({
  name: 'hub',
  log,
  graceS: config.http.shutdownGraceS,
  drain: async () => {
    await app.close(); // stops accepting, waits for in-flight requests
    await closeDb();
    await metrics.close();
  },
});
// Logged once a signal would stop it cleanly: the dev stack and tests start sending signals from here.
log.info({ metricsPort: metrics.port }, 'hub listening');

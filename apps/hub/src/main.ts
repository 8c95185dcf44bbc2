import { configPathFromArgs, createLogger, loadConfig, startMetricsServer } from '@fleet/config';
import { connectDb } from '@fleet/db';
import { buildHub } from './app.js';
import { HubConfig } from './config.js';
import { FileBlobStore } from './firmware/blob-store.js';

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
});
await app.listen({ host: config.http.host, port: config.http.port });
log.info({ metricsPort: metrics.port }, 'hub listening');

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'draining in-flight requests');
  const force = setTimeout(() => {
    log.error('in-flight requests did not finish in time; exiting');
    process.exit(1);
  }, config.http.shutdownGraceS * 1000);
  await app.close(); // stops accepting, waits for in-flight requests
  await closeDb();
  await metrics.close();
  clearTimeout(force);
  log.info('hub stopped');
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));

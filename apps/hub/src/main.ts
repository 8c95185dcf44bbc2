import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import {
  configPathFromArgs,
  createLogger,
  exitOnHelp,
  handleShutdown,
  labelledCounter,
  loadConfig,
  serviceUsage,
  startMetricsServer,
} from '@fleet/config';
import { connectDb } from '@fleet/db';
import { directWriteFallbackReasons, directWritesIn } from '@fleet/fwpkg';
import { EncryptionCodec, openPayloadKeys } from '@fleet/temporal/codec';
import { buildHub } from './app.js';
import { HubConfig } from './config.js';
import { FileBlobStore } from './firmware/blob-store.js';

exitOnHelp(serviceUsage('hub', 'The Fleet REST API over Postgres.', 'deploy/config/hub.example.json'));
const config = loadConfig(HubConfig, configPathFromArgs());
const log = createLogger('hub', config.log.level);
const tlsFiles = config.http.tls;
const readTls = () =>
  tlsFiles && { cert: readFileSync(tlsFiles.certFile, 'utf8'), key: readFileSync(tlsFiles.keyFile, 'utf8') };
const metrics = await startMetricsServer({ ...config.metrics, prefix: 'fleet_hub' });
const { db, close: closeDb } = connectDb(config.database.url, config.database.poolSize, (err) =>
  log.warn({ err: err.message }, 'idle Postgres connection lost'),
);
const countDirectWriteFallback = labelledCounter(metrics.registry, {
  name: 'fleet_hub_blob_direct_write_fallbacks_total',
  help:
    'Package uploads written through the page cache after all, by reason: the O_DIRECT handle did not open ' +
    '(open_failed) or the kernel refused a direct write (write_refused)',
  label: 'reason',
  values: directWriteFallbackReasons,
});
const blobs = new FileBlobStore(config.firmware.blobDir, {
  onDirectFallback: ({ reason, error, path, requestId }) => {
    countDirectWriteFallback(reason);
    log.warn({ reason, reqId: requestId, path, err: error.message }, 'a package upload goes on through the page cache');
  },
});
log.info(
  { blobDir: config.firmware.blobDir, directWrites: await directWritesIn(config.firmware.blobDir) },
  'firmware blob store (directWrites: large packages are written around the page cache)',
);
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
  ...(config.oidc ? { oidc: config.oidc } : {}),
  web: config.web,
  ...(config.rateLimit.enabled ? { rateLimit: config.rateLimit } : {}),
  ...(config.temporalPayloadEncryption
    ? {
        temporalCodec: new EncryptionCodec((await openPayloadKeys(config.temporalPayloadEncryption)).anySite()),
        temporalCodecOrigins: config.temporalPayloadEncryption.uiOrigins,
      }
    : {}),
  ...(tlsFiles ? { https: readTls()! } : {}),
});
await app.listen({ host: config.http.host, port: config.http.port });
if (!tlsFiles) log.warn({ host: config.http.host }, 'serving plain HTTP (http.allowPlainHttp): for a dev stack only');
// A renewed certificate, without a restart: new connections get it, open ones keep theirs. A certificate and key
// written one after the other may mismatch for a moment: that reload fails, and the next change picks up the pair.
const reloadTls = () => {
  try {
    (app.server as HttpsServer).setSecureContext({ ...readTls()!, minVersion: 'TLSv1.2' });
    log.info({ certFile: tlsFiles!.certFile }, 'TLS certificate reloaded');
  } catch (err) {
    log.error({ err, certFile: tlsFiles!.certFile }, 'TLS certificate reload failed; serving the previous one');
  }
};
const tlsWatched = tlsFiles ? [tlsFiles.certFile, tlsFiles.keyFile] : [];
for (const file of tlsWatched)
  watchFile(file, { interval: tlsFiles!.reloadCheckS * 1000 }, (now, before) => {
    if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) reloadTls();
  });

handleShutdown({
  name: 'hub',
  log,
  graceS: config.http.shutdownGraceS,
  drain: async () => {
    for (const file of tlsWatched) unwatchFile(file);
    await app.close(); // stops accepting, waits for in-flight requests
    await closeDb();
    await metrics.close();
  },
});
// Logged once a signal would stop it cleanly: the dev stack and tests start sending signals from here.
log.info({ metricsPort: metrics.port }, 'hub listening');

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Counter, Histogram } from 'prom-client';
import { Agent } from 'undici';
import type { Logger } from 'pino';
import { labelledCounter, startMetricsServer } from '@fleet/config';
import { siteTaskQueue } from '@fleet/domain';
import { directWriteFallbackReasons, directWritesIn } from '@fleet/fwpkg';
import { EncryptionCodec, parseKeyRing } from '@fleet/temporal/codec';
import { fleetDataConverter } from '@fleet/temporal';
import { DiscoveryCache, SiteLimiter } from '@fleet/redfish';
import {
  createBurnInActivities,
  createBmcPasswordActivity,
  createDeviceActivities,
  createFetchArtifactActivity,
  createFirmwareActivities,
  createNvosActivities,
  createSwitchActivities,
  type DeviceActivityDeps,
} from './activities/index.js';
import { createObserverActivities } from './activities/observe.js';
import { createRemediationActivities } from './activities/remediation.js';
import { SettleTimes } from './activities/settle-times.js';
import { HubObservations } from './observe/hub-observations.js';
import { startObserverEvents } from './observe/observer-events.js';
import { ArtifactCache } from './artifacts/artifact-cache.js';
import { HubDocumentStore } from './artifacts/hub-documents.js';
import { burnInAdapterFromConfig } from './burn-in/index.js';
import type { SatelliteConfig } from './config.js';
import type { SiteConfig } from './site-configs.js';
import { KnownHosts } from './nvos/known-hosts.js';
import { ActionJournal } from './journal/action-journal.js';
import { PendingPasswords } from './credentials/pending-passwords.js';
import { createSecretWriter } from './credentials/secret-writer.js';
import { createSecretStore } from './secrets/index.js';

/** Set by `pnpm build` (tools/build.ts) in the satellite's bundle: the prebuilt workflow bundle written beside it. */
declare const FLEET_WORKFLOW_BUNDLE_FILE: string | undefined;

/**
 * The worker's workflow code: the configured prebuilt bundle, else the one `pnpm build` wrote beside this bundle, else
 * (run from the sources) bundled here at start, which costs seconds of CPU (webpack).
 */
function workflowCodeSource(configured: string | undefined): { bundle?: string; source: string } {
  if (configured) return { bundle: configured, source: 'worker.workflowBundlePath' };
  if (typeof FLEET_WORKFLOW_BUNDLE_FILE === 'string')
    return { bundle: fileURLToPath(new URL(FLEET_WORKFLOW_BUNDLE_FILE, import.meta.url)), source: 'the build' };
  return { source: 'bundled at start from the sources' };
}

/** The site's BMC TLS policy, and the pins of single BMCs apart. */
function bmcTls({ pins, ...tls }: SatelliteConfig['redfish']['tls']) {
  return { tls, ...(pins ? { pinsByHost: pins } : {}) };
}

/** One site's running worker: the process stops when it ends on its own, and drains it on a signal. */
export interface SiteWorker {
  readonly siteId: string;
  readonly metricsPort: number;
  /** Settles when the worker has stopped; rejects with a fatal SDK error. */
  readonly running: Promise<void>;
  /** Stops the worker (running activities get the configured grace) and closes what the site opened. */
  drain(): Promise<void>;
}

/**
 * Starts the worker of one site (task queue site-<id>) from its config: its own secret store, journal, artifact cache,
 * metrics server and Temporal connection. `log` is already bound to the site; the process installs the Temporal
 * runtime once before calling this.
 */
export async function startSiteWorker({ config, temporalTls }: SiteConfig, log: Logger): Promise<SiteWorker> {
  const taskQueue = siteTaskQueue(config.siteId);
  const metrics = await startMetricsServer({ ...config.metrics, prefix: 'fleet_satellite' });
  const resets = new Counter({
    name: 'fleet_satellite_resets_total',
    help: 'Reset requests sent to BMCs',
    labelNames: ['node_type', 'action'],
    registers: [metrics.registry],
  });
  const settles = new Histogram({
    name: 'fleet_satellite_power_settle_seconds',
    help: 'Time from a power on or off sent to a BMC to the device reporting the asked state',
    labelNames: ['node_type', 'action'],
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600],
    registers: [metrics.registry],
  });
  const managerResets = new Counter({
    name: 'fleet_satellite_manager_resets_total',
    help: 'Manager.Reset requests sent to BMCs and HMCs',
    labelNames: ['node_type', 'manager'],
    registers: [metrics.registry],
  });

  const secrets = createSecretStore(config.secrets, process.env);
  const { hub } = config;
  // The hub's token is resolved on each call, so a rotated one is picked up.
  const hubCa = hub?.caFile ? readFileSync(hub.caFile, 'utf8') : undefined;
  const hubAccess = hub && {
    url: hub.url,
    token: async () => (await secrets.resolve(hub.tokenRef)).password,
    ca: hubCa,
  };
  const countDirectWriteFallback = labelledCounter(metrics.registry, {
    name: 'fleet_satellite_artifact_direct_write_fallbacks_total',
    help:
      'Artifact download attempts written through the page cache after all, by reason: the O_DIRECT handle did ' +
      'not open (open_failed) or the kernel refused a direct write (write_refused); a resumed download counts again',
    label: 'reason',
    values: directWriteFallbackReasons,
  });
  const artifacts = new ArtifactCache({
    ...config.artifacts,
    hub: hubAccess,
    log,
    onDirectFallback: ({ reason, error, digest }) => {
      countDirectWriteFallback(reason);
      log.warn({ reason, digest, err: error.message }, 'an artifact download goes on through the page cache');
    },
  });
  log.info(
    { dir: config.artifacts.dir, directWrites: await directWritesIn(config.artifacts.dir) },
    'artifact cache (directWrites: large packages are written around the page cache)',
  );
  // Hardware inventory documents and health observations share one connection pool to the hub.
  const hubDispatcher = hubCa ? new Agent({ connect: { ca: hubCa } }) : undefined;
  const hubCalls = hubAccess && { ...hubAccess, ...(hubDispatcher ? { dispatcher: hubDispatcher } : {}) };
  // Hardware inventory documents go to the hub by digest, as packages come from it.
  const documents = hubCalls && new HubDocumentStore(hubCalls);
  const observations = hubCalls && new HubObservations(hubCalls);
  // Redfish push events for the observer; without the config section it only polls.
  const observerEvents =
    config.events && (await startObserverEvents(config.events, config.siteId, log, metrics.registry));
  const observationCycle = new Histogram({
    name: 'fleet_satellite_observation_cycle_seconds',
    help: 'Time to observe every device of the site once',
    buckets: [1, 5, 10, 20, 30, 45, 60, 90, 120, 300],
    registers: [metrics.registry],
  });
  const observedChanges = new Counter({
    name: 'fleet_satellite_observation_changes_total',
    help: 'Health readings the observer found changed (or confirming a fault) and queued for the hub',
    registers: [metrics.registry],
  });
  const observationDelivery = new Histogram({
    name: 'fleet_satellite_observation_delivery_seconds',
    help: 'Time the hub took to store one batch of health readings',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [metrics.registry],
  });

  // Seven days: far beyond any activity's retries, so an entry outlives every attempt that could need it.
  const journal = await ActionJournal.open(join(config.dataDir, 'action-journal.jsonl'), { keepMs: 7 * 86_400_000 });
  const deviceDeps: DeviceActivityDeps = {
    secrets,
    log,
    journal,
    pollIntervalMs: config.redfish.pollIntervalMs,
    redfish: {
      auth: config.redfish.auth,
      connectTimeoutMs: config.redfish.connectTimeoutMs,
      requestTimeoutMs: config.redfish.requestTimeoutMs,
      uploadTimeoutMs: config.redfish.uploadTimeoutMs,
      siteLimiter: new SiteLimiter(config.redfish.siteConcurrency),
      // Each activity opens its own client: what discovery finds of a BMC is shared between them.
      discovery: new DiscoveryCache(),
      ...bmcTls(config.redfish.tls),
      logger: log,
    },
    onReset: (nodeType, action) => resets.inc({ node_type: nodeType, action }),
    ...(config.redfish.settleWaitFraction > 0
      ? { settleTimes: new SettleTimes(config.redfish.settleWaitFraction) }
      : {}),
    onSettled: (nodeType, action, seconds) => settles.observe({ node_type: nodeType, action }, seconds),
    onManagerReset: (nodeType, manager) => managerResets.inc({ node_type: nodeType, manager }),
  };

  const knownHosts = new KnownHosts(join(config.dataDir, 'nvos-known-hosts.json'));
  const secretWriter = createSecretWriter(config.secrets);
  // Rotations of switch and BMC passwords share one pending store (their references are never the same; the hub refuses
  // shared ones); the file keeps the name it had when it held switch passwords only.
  const pendingPasswords = new PendingPasswords(join(config.dataDir, 'switch-pending-passwords.json'));

  // Payloads are decrypted and encrypted outside the workflow sandbox, with the ring the workflow agent holds too.
  const { payloadEncryption } = config.temporal;
  const codec =
    payloadEncryption &&
    new EncryptionCodec(
      parseKeyRing((await secrets.resolve(payloadEncryption.keyRingRef)).password, payloadEncryption.keyRingRef),
    );
  const workflowCode = workflowCodeSource(config.worker.workflowBundlePath);
  log.info(workflowCode, 'workflow code');
  const connection = await NativeConnection.connect({
    address: config.temporal.address,
    ...(temporalTls ? { tls: temporalTls } : {}),
  });
  const worker = await Worker.create({
    connection,
    dataConverter: fleetDataConverter(codec || undefined),
    namespace: config.temporal.namespace,
    taskQueue,
    ...(workflowCode.bundle
      ? { workflowBundle: { codePath: workflowCode.bundle } }
      : { workflowsPath: fileURLToPath(import.meta.resolve('@fleet/workflows')) }),
    activities: {
      ...createDeviceActivities({ ...deviceDeps, ...(documents ? { documents } : {}) }),
      ...createFirmwareActivities({ ...deviceDeps, artifacts }),
      ...createFetchArtifactActivity({ artifacts }),
      ...createRemediationActivities(deviceDeps),
      ...createBmcPasswordActivity({ ...deviceDeps, secretWriter, pendingPasswords }),
      ...createObserverActivities({
        ...deviceDeps,
        ...(observations ? { hub: observations } : {}),
        ...(observerEvents ? { events: observerEvents } : {}),
        onCycle: ({ seconds, changes }) => {
          observationCycle.observe(seconds);
          observedChanges.inc(changes);
        },
        onDelivery: (seconds) => observationDelivery.observe(seconds),
      }),
      ...createNvosActivities({ secrets, log, artifacts, nvos: config.nvos, knownHosts }),
      ...createSwitchActivities({
        secrets,
        log,
        artifacts,
        nvos: config.nvos,
        knownHosts,
        secretWriter,
        pendingPasswords,
        certificates: { switchCertRoot: config.nvos.switchCertRoot, clientTlsRoot: config.nvos.clientTlsRoot },
        pollIntervalMs: config.nvos.pollIntervalMs,
      }),
      // Without a burnIn section the activity refuses at once (FAILED_PRECONDITION): every satellite registers it.
      ...createBurnInActivities({ adapter: config.burnIn && burnInAdapterFromConfig(config.burnIn, log), log }),
    },
    maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentActivities,
    // SIGTERM: running activities get this long to finish, then are cancelled and retried elsewhere.
    shutdownGraceTime: `${config.worker.shutdownGraceTimeS}s`,
  });

  const running = worker.run();
  log.info(
    { metricsPort: metrics.port, temporal: config.temporal.address, temporalTls: Boolean(temporalTls) },
    'site worker started',
  );
  return {
    siteId: config.siteId,
    metricsPort: metrics.port,
    running,
    drain: async () => {
      // The SDK Runtime may have begun the worker's shutdown on the same signal.
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await observerEvents?.close();
      await artifacts.close();
      await journal.close();
      await hubDispatcher?.close();
      await connection.close();
      await metrics.close();
      log.info('site worker stopped');
    },
  };
}

import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { configPathFromArgs, createLogger, errorText, loadConfig, startMetricsServer } from '@fleet/config';
import { connectDb } from '@fleet/db';
import { ensureSearchAttributes } from '@fleet/temporal';
import { AgentConfig } from './config.js';
import { dispatchOnce } from './dispatcher.js';
import { createAgentMetrics } from './metrics.js';
import { reconcileOnce } from './projector.js';
import { intentChannel } from '@fleet/db';

const config = loadConfig(AgentConfig, configPathFromArgs());
const log = createLogger('workflow-agent', config.log.level);
const metricsServer = await startMetricsServer({ ...config.metrics, prefix: 'fleet_agent' });
const metrics = createAgentMetrics(metricsServer.registry);
const { db, close: closeDb } = connectDb(config.database.url, config.database.poolSize, (err) =>
  log.warn({ err: err.message }, 'idle Postgres connection lost'),
);

// Lazy: the agent starts, and keeps its intents, while Temporal is down.
const connection = Connection.lazy({ address: config.temporal.address });
const client = new Client({ connection, namespace: config.temporal.namespace });

let stopping = false;
let wake: (() => void) | undefined;
const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    wake = () => (clearTimeout(t), resolve());
  });

/** LISTEN for new intents so a POST is dispatched at once; polling remains the fallback. */
async function listenForIntents(): Promise<void> {
  while (!stopping) {
    const listener = new pg.Client({ connectionString: config.database.url });
    try {
      await listener.connect();
      await listener.query(`listen ${intentChannel}`);
      listener.on('notification', () => wake?.());
      await new Promise((_, reject) => listener.once('error', reject).once('end', () => reject(new Error('listener closed'))));
    } catch (err) {
      if (!stopping) log.warn({ err: (err as Error).message }, 'intent listener lost; polling until it is back');
    } finally {
      await listener.end().catch(() => undefined);
    }
    if (!stopping) await new Promise((r) => setTimeout(r, 2_000));
  }
}

async function ensureNamespace(): Promise<void> {
  while (!stopping) {
    try {
      await ensureSearchAttributes(connection, config.temporal.namespace);
      return;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cannot register search attributes yet; retrying');
      await new Promise((r) => setTimeout(r, 2_000));
    }
  }
}

async function dispatchLoop(): Promise<void> {
  while (!stopping) {
    let handled = 0;
    try {
      handled = await dispatchOnce({ db, client, config, log, metrics });
    } catch (err) {
      log.error({ err: errorText(err) }, 'dispatch cycle failed');
    }
    if (handled < config.dispatch.batchSize) await sleep(config.dispatch.idleIntervalMs);
  }
}

async function reconcileLoop(): Promise<void> {
  while (!stopping) {
    const end = metrics.reconcileSeconds.startTimer();
    try {
      const stats = await reconcileOnce({ db, client, log, metrics, pageSize: config.projection.pageSize });
      if (stats.changed > 0) log.debug(stats, 'reconciled');
    } catch (err) {
      log.warn({ err: errorText(err) }, 'reconcile cycle failed; will retry');
    } finally {
      end();
    }
    await new Promise((r) => setTimeout(r, config.projection.intervalMs));
  }
}

log.info({ temporal: config.temporal.address, metricsPort: metricsServer.port }, 'workflow agent started');
void listenForIntents();
await ensureNamespace();
const loops = Promise.all([dispatchLoop(), reconcileLoop()]);

const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'draining');
  wake?.();
  await loops; // each loop finishes its current cycle
  await connection.close().catch(() => undefined);
  await closeDb();
  await metricsServer.close();
  log.info('workflow agent stopped');
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));

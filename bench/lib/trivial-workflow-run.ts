import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection, type DataConverter } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { TrivialActivities } from './trivial-workflow.js';

const workflowModules = fileURLToPath(new URL('../../workflows/node_modules', import.meta.url));

export interface BaselineOptions {
  address: string;
  devices: number;
  /** Workflows in flight at once (the campaign's site cap). */
  concurrency: number;
  /** No-op activities per workflow, one after another. */
  activities: number;
  /** Each activity's wait. */
  holdMs: number;
  /** The worker's and the client's, e.g. with the payload codec (bench security). */
  dataConverter?: DataConverter;
}

export interface BaselineFigures {
  makespanS: number;
  eventsPerDevice: number;
}

/**
 * The trivial-workflow baseline: `devices` workflows of `activities` no-op activities each, at most `concurrency`
 * at a time (a finished one frees its slot at once), on the given Temporal server with a worker of its own.
 */
export async function runTrivialBaseline(o: BaselineOptions): Promise<BaselineFigures> {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by the stack in this process.
  }
  const taskQueue = `bench-trivial-${randomUUID()}`;
  const workerConnection = await NativeConnection.connect({ address: o.address });
  const connection = await Connection.connect({ address: o.address });
  const client = new Client({ connection, ...(o.dataConverter ? { dataConverter: o.dataConverter } : {}) });
  const activities: TrivialActivities = { noop: (ms) => new Promise((r) => setTimeout(r, ms)) };
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./trivial-workflow.ts', import.meta.url)),
    // The bundle resolves @temporalio/workflow where the workflows package has it (the root package does not).
    bundlerOptions: {
      webpackConfigHook: (config) => ({
        ...config,
        resolve: {
          ...config.resolve,
          modules: [...(config.resolve?.modules ?? ['node_modules']), workflowModules],
        },
      }),
    },
    activities,
    ...(o.dataConverter ? { dataConverter: o.dataConverter } : {}),
    maxConcurrentActivityTaskExecutions: Math.max(100, o.concurrency),
  });
  const ids: string[] = [];
  try {
    const started = Date.now();
    await worker.runUntil(async () => {
      let next = 0;
      const slot = async () => {
        while (next < o.devices) {
          const id = `bench-trivial-${next++}-${taskQueue}`;
          ids.push(id);
          await client.workflow.execute('trivialDeviceWorkflow', {
            taskQueue,
            workflowId: id,
            args: [o.activities, o.holdMs],
          });
        }
      };
      await Promise.all(Array.from({ length: Math.min(o.concurrency, o.devices) }, slot));
    });
    const makespanS = (Date.now() - started) / 1000;
    let events = 0;
    for (const id of ids) events += (await client.workflow.getHandle(id).describe()).historyLength;
    return { makespanS, eventsPerDevice: events / o.devices };
  } finally {
    await connection.close();
    await workerConnection.close();
  }
}

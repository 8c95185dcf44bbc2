import { fileURLToPath } from 'node:url';
import { repoRoot } from '../../tools/lib/processes.js';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { TrivialActivities } from './trivial-workflow.js';
import { jobStages, medianStages, percentile, type JobStages } from './job-timeline.js';

export interface TrivialBurst {
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Median stages as for a job: dispatch is the start call, projection the result's arrival. */
  stagesP50Ms: Record<keyof JobStages, number>;
}

/**
 * The baseline in the same run: `count` trivial workflows (one activity each, trivial-workflow.ts, that only waits
 * `holdMs`: the device's own time in the jobs it stands for) started 20 at a time, as the bench posts its jobs, on a
 * worker with the satellite's activity concurrency, against the same dev server. Each latency is from the start call
 * to the workflow's result.
 */
export async function trivialBurst(
  address: string,
  count: number,
  holdMs: number,
  workerOptions: Partial<WorkerOptions> = {},
): Promise<TrivialBurst> {
  const taskQueue = `bench-trivial-${process.pid}`;
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./trivial-workflow.ts', import.meta.url)),
    activities: { noop: (ms) => new Promise((r) => setTimeout(r, ms)) } satisfies TrivialActivities,
    maxConcurrentActivityTaskExecutions: 200,
    ...workerOptions,
    // The bundle's own imports of @temporalio/workflow resolve from the workflows package.
    bundlerOptions: {
      webpackConfigHook: (config) => ({
        ...config,
        resolve: {
          ...config.resolve,
          modules: [...(config.resolve?.modules ?? []), `${repoRoot}/workflows/node_modules`],
        },
      }),
    },
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const running = worker.run();
  try {
    const runOne = async (i: number) => {
      const started = performance.now();
      await client.workflow.execute('trivialDeviceWorkflow', {
        taskQueue,
        workflowId: `${taskQueue}-warm-${i}`,
        args: [1, holdMs],
      });
      return performance.now() - started;
    };
    await runOne(-1); // warm the worker's workflow sandbox
    const pending: Promise<{ id: string; createdAt: Date; updatedAt: Date; ms: number }>[] = [];
    for (let i = 0; i < count; i += 20) {
      // Started 20 at a time like the bench's job posts; each is timed from its own start call to its result.
      const started = await Promise.all(
        Array.from({ length: Math.min(20, count - i) }, async (_, j) => {
          const at = { clock: performance.now(), date: new Date() };
          const handle = await client.workflow.start('trivialDeviceWorkflow', {
            taskQueue,
            workflowId: `${taskQueue}-${i + j}`,
            args: [1, holdMs],
          });
          return { at, handle };
        }),
      );
      pending.push(
        ...started.map(async ({ at, handle }) => {
          await handle.result();
          const ms = performance.now() - at.clock;
          return { id: handle.workflowId, createdAt: at.date, updatedAt: new Date(at.date.getTime() + ms), ms };
        }),
      );
    }
    const done = await Promise.all(pending);
    const ms = done.map((d) => d.ms);
    return {
      stagesP50Ms: medianStages(await jobStages(client, done)),
      p50Ms: Math.round(percentile(ms, 50)),
      p95Ms: Math.round(percentile(ms, 95)),
      maxMs: Math.round(Math.max(...ms)),
    };
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await workerConnection.close();
  }
}

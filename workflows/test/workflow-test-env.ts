/**
 * Workflow tests with mocked activities: the workflows' own logic on a real Temporal dev server, each test with its
 * own worker, task queue and plain-function activities that record every call.
 *
 * Timers run in real time. @temporalio/testing's time-skipping server (createTimeSkipping) is the Java test server,
 * downloaded when the test starts, which this build cannot do (no network beyond package registries). So the server
 * is the project's Temporal CLI (createLocal with an existing path: nothing is downloaded) and every test shortens
 * the workflow's timers through its own inputs (floors, waits, delays and poll intervals of 0 to 1 s), as the e2e
 * tests scale them with a timeScale. With the time-skipping server, the cold-reboot runbook
 * (power-workflows.test.ts) would run with its default timings (3 min discharge floor, 2 min BMC-up floor, NVUE
 * hellos 30 s apart and doubling, 5 min boot wait) and the compute firmware activation
 * (firmware-workflows.test.ts) with its 30 s UPDATE_DELAY and 3 min AC stabilisation.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  ApplicationFailure,
  CancelledFailure,
  WorkflowFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { jobMemoKey, type ActivityTimeouts, type BmcTarget, type JobMemo } from '@fleet/domain';
import { saDeviceId, saJobKind, saSiteId, temporalCliPath } from '@fleet/temporal';

// The workflows under test fail on purpose; their failures are asserted, not logged.
Runtime.install({ logger: new DefaultLogger('ERROR') });

/** One attempt per activity unless a test says otherwise: failures surface at once. */
export const activity: ActivityTimeouts = { heartbeatTimeoutS: 10, startToCloseTimeoutS: 30, maximumAttempts: 1 };

export function bmc(deviceId: string, nodeType: string): BmcTarget {
  return { deviceId, nodeType, bmcUrl: `https://${deviceId}.bmc.test`, credentialRef: 'bmc/default' };
}

/** A non-retryable failure as a satellite activity throws it (typed, so the workflow maps it to a job error). */
export function activityError(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

export interface Call {
  activity: string;
  input: Record<string, unknown>;
}

// Activity inputs differ per activity; the recorder only needs them to be objects.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Activities = Record<string, (input: any) => Promise<unknown>>;

/** Wraps each mock so its calls are recorded, in the order the worker ran them. */
export function recorded<A extends Activities>(impl: A): { activities: A; calls: Call[] } {
  const calls: Call[] = [];
  const activities = Object.fromEntries(
    Object.entries(impl).map(([name, fn]) => [
      name,
      (input: Record<string, unknown>) => {
        calls.push({ activity: name, input });
        return fn(input);
      },
    ]),
  ) as A;
  return { activities, calls };
}

/** The prebuilt bundle of the test run (tools/run-tests.ts), else one bundle per process: bundling is slow. */
let bundle: Promise<NonNullable<WorkerOptions['workflowBundle']>> | undefined;
function workflowBundle(): Promise<NonNullable<WorkerOptions['workflowBundle']>> {
  const prebuilt = process.env['FLEET_TEST_WORKFLOW_BUNDLE'];
  bundle ??= prebuilt
    ? Promise.resolve({ codePath: prebuilt })
    : bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('../src/index.ts', import.meta.url)) });
  return bundle;
}

export interface WorkflowTestEnv {
  client: Client;
  /** Runs `body` while a worker with these activities serves a task queue of its own; stops the worker after. */
  withWorker<T>(activities: Activities, body: (taskQueue: string) => Promise<T>): Promise<T>;
  teardown(): Promise<void>;
}

/** One dev server per test file, with the search attributes the workflows set (campaign children). */
export async function startWorkflowTestEnv(): Promise<WorkflowTestEnv> {
  const [env, code] = await Promise.all([
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: temporalCliPath() },
        ip: '127.0.0.1',
        searchAttributes: [saJobKind, saSiteId, saDeviceId],
        log: { format: 'pretty', level: 'error' },
      },
    }),
    workflowBundle(),
  ]);
  return {
    client: env.client,
    async withWorker(activities, body) {
      const taskQueue = `workflow-test-${randomUUID()}`;
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowBundle: code,
        activities,
      });
      return worker.runUntil(body(taskQueue));
    },
    teardown: () => env.teardown(),
  };
}

/** The job memo the workflow published; empty until its first workflow task has run. */
export async function memoOf(handle: WorkflowHandle): Promise<JobMemo> {
  return ((await handle.describe()).memo?.[jobMemoKey] as JobMemo | undefined) ?? {};
}

/** The ApplicationFailure a workflow failed with; fails the test if it succeeded or ended otherwise. */
export async function failureOf(handle: WorkflowHandle): Promise<ApplicationFailure> {
  const cause = await endedWith(handle);
  if (!(cause instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(cause)}`);
  return cause;
}

/** Whether the workflow ended cancelled (not failed, not succeeded). */
export async function endedCancelled(handle: WorkflowHandle): Promise<boolean> {
  return (await endedWith(handle)) instanceof CancelledFailure;
}

async function endedWith(handle: WorkflowHandle): Promise<unknown> {
  try {
    const result: unknown = await handle.result();
    throw new Error(`expected the workflow to fail, it returned ${JSON.stringify(result)}`);
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    return err.cause;
  }
}

/** Polls `check` (a memo, a call count) until it holds; for states a workflow reaches while it waits. */
export async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A promise the test settles: mocks that must hold until the test has looked at the workflow mid-flight. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from 'pino';
import { errorText } from '@fleet/config';
import {
  cancelIfNotStarted,
  failJobBeforeStart,
  hasPendingStart,
  leaseDueIntents,
  markIntentDispatched,
  markIntentFailed,
  markIntentRetry,
  setJobState,
  type Db,
  type Intent,
  type Job,
} from '@fleet/db';
import { siteTaskQueue } from '@fleet/domain';
import { saDeviceId, saJobKind, saSiteId } from '@fleet/temporal';
import type { AgentConfig } from './config.js';
import { PermanentIntentError, workflowFor } from './job-inputs/index.js';
import type { AgentMetrics } from './metrics.js';
import type { TemporalClients } from './temporal-clients.js';

/** A signal whose workflow has ended: the intent fails, the job is left as it is. */
class SignalVoidError extends Error {}

/** A start whose job was cancelled before it was made: the workflow never starts, the job ends cancelled. */
class CancelledBeforeStartError extends Error {}

export interface DispatcherDeps {
  db: Db;
  clients: TemporalClients;
  config: AgentConfig;
  log: Logger;
  metrics: AgentMetrics;
}

const PARALLEL_STARTS = 32;

/**
 * Turns leased intents into Temporal calls. The workflow ID is the job ID, so a
 * start repeated after a crash or a lost reply finds the existing workflow and
 * never runs the work twice. Returns how many intents it handled.
 */
export async function dispatchOnce(deps: DispatcherDeps): Promise<number> {
  const { db, config } = deps;
  const leased = await leaseDueIntents(db, config.dispatch.batchSize, config.dispatch.leaseS);
  // Starts run PARALLEL_STARTS at a time, each slot taking the next as soon as it is free (no batch barrier: one slow
  // start does not hold the others back); a cancel or signal waits for every start of this lease.
  const starts = leased.filter((i) => i.kind === 'start');
  let next = 0;
  const slot = async () => {
    while (next < starts.length) await handle(deps, starts[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_STARTS, starts.length) }, slot));
  for (const intent of leased.filter((i) => i.kind !== 'start')) await handle(deps, intent);
  return leased.length;
}

async function handle(deps: DispatcherDeps, intent: Intent & { job: Job }): Promise<void> {
  const { db, log, metrics, config } = deps;
  const ilog = log.child({ jobId: intent.jobId, workflowId: intent.jobId, intent: intent.kind });
  try {
    if (intent.kind === 'start') await start(deps, intent);
    else if (intent.kind === 'cancel') await cancel(deps, intent.job);
    else if (intent.kind === 'signal') await signal(deps, intent);
    else throw new PermanentIntentError('INVALID_ARGUMENT', `unknown intent kind ${intent.kind}`);
    if (!(await markIntentDispatched(db, intent.id)) && intent.kind === 'start') {
      // Claimed while the call was in flight (another agent took the job as cancelled before its start, after this
      // lease ran out): the workflow this call made must not run for a job that is closed.
      ilog.warn('start claimed by a cancel while it was being made: cancelling the workflow it started');
      await cancel(deps, intent.job);
      return;
    }
    metrics.intentsDispatched.inc({ kind: intent.kind });
    metrics.intentWaitSeconds.observe((Date.now() - intent.createdAt.getTime()) / 1000);
    ilog.debug('intent dispatched');
  } catch (err) {
    // Logged and stored on the intent: never err.message itself, which for a drizzle error holds the statement's
    // values.
    const message = errorText(err);
    if (err instanceof CancelledBeforeStartError) {
      ilog.info('cancelled before its start was made: never started');
      await cancelIfNotStarted(db, intent.jobId);
      return;
    }
    if (err instanceof SignalVoidError) {
      ilog.warn({ err: message }, 'signal for an ended workflow dropped');
      await markIntentFailed(db, intent.id, message);
      return;
    }
    if (err instanceof PermanentIntentError) {
      metrics.intentErrors.inc({ kind: intent.kind, permanent: 'true' });
      ilog.error({ err: message }, 'intent cannot be carried out; job failed');
      const error = { code: err.code, message };
      // A start that can never be made leaves no workflow to drive the job's device jobs: they close with it.
      if (intent.kind === 'start') return await failJobBeforeStart(db, intent, error);
      await markIntentFailed(db, intent.id, message);
      await setJobState(db, intent.jobId, 'failed', error);
      return;
    }
    metrics.intentErrors.inc({ kind: intent.kind, permanent: 'false' });
    const retryInS = Math.min(config.dispatch.maxRetryS, 2 ** Math.min(intent.attempts, 10));
    ilog.warn({ err: message, retryInS, attempts: intent.attempts }, 'Temporal did not take the intent; will retry');
    await markIntentRetry(db, intent.id, message, retryInS);
  }
}

/** Signals go to running workflows only: before the start is dispatched they wait, after the end they are void. */
async function signal(deps: DispatcherDeps, intent: Intent & { job: Job }): Promise<void> {
  const name = intent.payload?.signal;
  if (!name) throw new PermanentIntentError('INVALID_ARGUMENT', 'signal intent without a signal');
  try {
    deps.metrics.temporalCalls.inc({ op: 'signal' });
    // A signal's arguments (a decision) are in the intent, validated by the hub when it wrote it.
    const args = intent.payload?.args ?? [];
    const client = intent.job.siteId ? deps.clients.forSite(intent.job.siteId) : deps.clients.any;
    await client.workflow.getHandle(intent.jobId).signal(name, ...args);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    if (intent.job.state === 'queued') throw new Error(`workflow ${intent.jobId} not started yet`, { cause: err });
    throw new SignalVoidError(`workflow ${intent.jobId} has ended; ${name} not delivered`, { cause: err });
  }
}

async function start(deps: DispatcherDeps, intent: Intent & { job: Job }): Promise<void> {
  const { metrics } = deps;
  const { job } = intent;
  // Leased before (attempts counts leases): that attempt may have started the workflow and lost the reply.
  const triedBefore = intent.attempts > 1;
  if (job.state === 'cancelling') {
    // Its cancel came first. A workflow an earlier attempt started is cancelled by the cancel intent; else none starts.
    if (triedBefore && (await workflowExists(deps, job))) return;
    throw new CancelledBeforeStartError();
  }
  if (job.state !== 'queued') return; // ended before it ever started
  if (!job.siteId) throw new PermanentIntentError('INVALID_ARGUMENT', 'job without a site');
  const client = deps.clients.forSite(job.siteId);
  let built: Awaited<ReturnType<typeof workflowFor>>;
  try {
    built = await workflowFor(deps, job);
  } catch (err) {
    // A start that can no longer be built (its plan or package gone) that an earlier attempt made is no failure.
    if (err instanceof PermanentIntentError && triedBefore && (await workflowExists(deps, job))) return;
    throw err;
  }
  const { type, input } = built;
  try {
    metrics.temporalCalls.inc({ op: 'start' });
    const end = metrics.startSeconds.startTimer();
    await client.workflow.start(type, {
      workflowId: job.id,
      taskQueue: siteTaskQueue(job.siteId),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: saJobKind, value: job.kind },
        { key: saSiteId, value: job.siteId },
        ...(job.deviceId ? [{ key: saDeviceId, value: job.deviceId }] : []),
      ],
    });
    end();
  } catch (err) {
    // Started before (a retry after a crash or a lost answer): the workflow is running or done.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** Whether Temporal has the job's workflow (running or closed). */
async function workflowExists(deps: DispatcherDeps, job: Job): Promise<boolean> {
  const client = job.siteId ? deps.clients.forSite(job.siteId) : deps.clients.any;
  try {
    deps.metrics.temporalCalls.inc({ op: 'describe' });
    await client.workflow.getHandle(job.id).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

async function cancel(deps: DispatcherDeps, job: Job): Promise<void> {
  const { db, metrics } = deps;
  const client = deps.clients.any;
  // A job whose start was never tried is cancelled here, without Temporal.
  if (await cancelIfNotStarted(db, job.id, { untried: true })) return;
  try {
    metrics.temporalCalls.inc({ op: 'cancel' });
    await client.workflow.getHandle(job.id).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // No workflow, or one already closed (Temporal says not found to both). A start still pending after an earlier try
    // may yet make one (its call in flight elsewhere): the cancel is tried again once that start's retry has settled it
    // (start() sees the job cancelling: it finds the workflow, or ends the job cancelled without starting it).
    if (await hasPendingStart(db, job.id)) throw new Error(`the start of ${job.id} is still pending`, { cause: err });
  }
}

import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { Logger } from 'pino';
import { SlurmError, type SlurmErrorKind } from '@fleet/slurm';
import { BurnInInputError, type BurnInAdapter, type BurnInProgress } from '../burn-in/index.js';
import type { BurnInActivities, BurnInInput, BurnInResult } from '@fleet/domain';
import { attemptLog } from './context.js';
import { heartbeatEveryMs } from '../heartbeat-every.js';

export interface BurnInActivityDeps {
  /** Absent on a satellite without a `burnIn` config section: runBurnIn then fails at once, saying so. */
  adapter: BurnInAdapter | undefined;
  log: Logger;
}

const slurmCodeFor: Record<SlurmErrorKind, string> = {
  Unavailable: 'UNAVAILABLE',
  Timeout: 'DEADLINE_EXCEEDED',
  Unauthenticated: 'UNAUTHENTICATED',
  NotFound: 'NOT_FOUND',
  InvalidArgument: 'INVALID_ARGUMENT',
  InvalidPartition: 'FAILED_PRECONDITION',
  Protocol: 'INTERNAL',
  Internal: 'INTERNAL',
};

/**
 * Failures of the run itself (not of a test: those are verdicts). A cluster that does not answer, or answers 500
 * (slurmrestd's word for a refused token as well as for a slurmctld it cannot reach), may do better on the next
 * attempt, which follows the jobs already submitted.
 */
function toFailure(err: unknown, input: BurnInInput): unknown {
  if (err instanceof BurnInInputError)
    return ApplicationFailure.create({
      type: 'INVALID_ARGUMENT',
      message: `burn-in of job ${input.jobId}: ${err.message}`,
      nonRetryable: true,
    });
  if (err instanceof SlurmError)
    return ApplicationFailure.create({
      type: slurmCodeFor[err.kind],
      message: `burn-in of job ${input.jobId}: ${err.message}`,
      details: [{ slurmUrl: err.url, status: err.status ?? null, slurmErrorCode: err.errorCode ?? null }],
      nonRetryable: !err.retryable && err.kind !== 'Internal',
    });
  return err;
}

/** An earlier attempt's heartbeat, if it has the shape this code writes (anything else is ignored). */
function priorProgress(details: unknown): BurnInProgress | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { jobs, settled } = details as Partial<BurnInProgress>;
  if (typeof jobs !== 'object' || jobs === null || typeof settled !== 'object' || settled === null) return undefined;
  if (!Object.values(jobs).every((id) => Number.isInteger(id) && id > 0)) return undefined;
  if (!Object.values(settled).every((v) => Array.isArray(v) && v.length > 0)) return undefined;
  return { jobs, settled };
}

/**
 * Only a cancellation asked for (the workflow cancelled the burn-in) cancels the SLURM jobs. A worker shutting
 * down, a heartbeat timeout or a paused activity leaves them running for the next attempt to follow.
 */
function cancelRequested(ctx: Context): boolean {
  const details = ctx.cancellationDetails;
  if (details) return details.cancelRequested;
  const reason: unknown = ctx.cancellationSignal.reason;
  return reason instanceof CancelledFailure && reason.message === 'CANCELLED';
}

/**
 * runBurnIn: the burn-in's tests as SLURM jobs (burn-in/adapter.ts), one verdict per tray and test. Heartbeats the
 * SLURM job ids right after each submit and the verdicts as they come, so a retry follows instead of submitting (and
 * submitOnce finds by name a job whose heartbeat was lost). On cancellation the unfinished jobs are cancelled.
 */
async function runBurnIn(deps: BurnInActivityDeps, input: BurnInInput): Promise<BurnInResult> {
  const adapter = deps.adapter;
  if (!adapter)
    throw ApplicationFailure.create({
      type: 'FAILED_PRECONDITION',
      message: `burn-in of job ${input.jobId}: this satellite has no burnIn config (SLURM) and runs no burn-in`,
      nonRetryable: true,
    });
  const ctx = Context.current();
  const log = attemptLog(deps, { jobId: input.jobId, burnInAttempt: input.attempt });
  const prior = priorProgress(ctx.info.heartbeatDetails);
  let progress: BurnInProgress = prior ?? { jobs: {}, settled: {} };
  const beat = () => ctx.heartbeat(progress);
  // Liveness on a clock too: a slow slurmrestd answer must not look like a dead worker.
  const ticker = setInterval(beat, heartbeatEveryMs(ctx.info));
  if (prior) log.info({ slurmJobIds: Object.values(prior.jobs) }, 'following the jobs an earlier attempt submitted');
  try {
    return await adapter.run(input, {
      signal: ctx.cancellationSignal,
      ...(prior ? { progress: prior } : {}),
      onProgress: (p) => {
        progress = { jobs: { ...p.jobs }, settled: { ...p.settled } };
        beat();
      },
      sleep: (ms) => ctx.sleep(ms),
    });
  } catch (err) {
    if (!ctx.cancellationSignal.aborted) throw toFailure(err, input);
    if (cancelRequested(ctx)) {
      const cancelled = await adapter
        .cancelJobs(input, progress, AbortSignal.timeout(30_000))
        .catch((e: unknown) => log.error({ err: (e as Error).message }, 'could not cancel the SLURM jobs'));
      log.info({ cancelled }, 'burn-in cancelled: its SLURM jobs cancelled');
    } else {
      log.info({ slurmJobIds: Object.values(progress.jobs) }, 'attempt ended; SLURM jobs left for the next attempt');
    }
    throw err instanceof CancelledFailure ? err : ctx.cancellationSignal.reason;
  } finally {
    clearInterval(ticker);
  }
}

export function createBurnInActivities(deps: BurnInActivityDeps): BurnInActivities {
  return { runBurnIn: (input) => runBurnIn(deps, input) };
}

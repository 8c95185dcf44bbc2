import { ActivityFailure, CancelledFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';

/**
 * Whether `err` ended the work because the job was cancelled: a cancellation, or an activity that timed out after its
 * cancel was requested. An activity the workflow waits for (WAIT_CANCELLATION_COMPLETED) times out instead of
 * acknowledging when its satellite is down or cut off; Temporal does not retry it then, and that must not read as the
 * device failing. An activity that failed for a reason of its own as the cancel came is a failure, said as such.
 */
export function isJobCancelled(err: unknown): boolean {
  return (
    isCancellation(err) ||
    (err instanceof ActivityFailure && err.retryState === 'CANCEL_REQUESTED' && err.cause instanceof TimeoutFailure)
  );
}

/** What a workflow throws to end as cancelled for an error isJobCancelled accepts. */
export function asCancellation(err: unknown): unknown {
  return isCancellation(err) ? err : new CancelledFailure('the job was cancelled', [], err as Error);
}

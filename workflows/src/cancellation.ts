import { ActivityFailure, CancelledFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';

/**
 * The cancellation `err` ends the job with, or undefined when the job was not cancelled: a cancellation itself, or an
 * activity that timed out after its cancel was requested, made a cancellation. An activity the workflow waits for
 * (WAIT_CANCELLATION_COMPLETED) times out instead of acknowledging when its satellite is down or cut off; Temporal does
 * not retry it then, and that must not read as the device failing. An activity that failed for a reason of its own as
 * the cancel came is a failure, said as such.
 */
export function jobCancellation(err: unknown): Error | undefined {
  if (isCancellation(err)) return err as Error;
  if (err instanceof ActivityFailure && err.retryState === 'CANCEL_REQUESTED' && err.cause instanceof TimeoutFailure)
    return new CancelledFailure('the job was cancelled', [], err);
  return undefined;
}

import { ApplicationFailure } from '@temporalio/workflow';
import { jobCancellation } from './cancellation.js';
import { jobErrorFrom } from './device-power.js';
import type { StageRecorder } from './timeline.js';

/**
 * Closes the timeline of a switch job that ended before its result: the running stage failed
 * (or was cancelled), the rest are not reached, and the error is published. Returns what the
 * workflow throws: the cancellation itself, or a non-retryable failure of the same type.
 */
export function stagedJobFailure(rec: StageRecorder, err: unknown): unknown {
  const cancellation = jobCancellation(err);
  const cancelled = cancellation !== undefined;
  const error = jobErrorFrom(cancellation ?? err);
  const current = rec.timeline.currentStage;
  if (current) rec.finish(current, cancelled ? 'cancelled' : 'failed', error.message);
  rec.skipRemaining(cancelled ? 'the job was cancelled' : 'not reached');
  rec.emit({ error });
  return cancellation ?? ApplicationFailure.nonRetryable(error.message, String(error.code), error.details);
}

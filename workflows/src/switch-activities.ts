import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { ActivityTimeouts, FirmwareActivities, SwitchActivities } from '@fleet/domain';

/** Failure types no retry mends; an unreachable or rebooting switch, a stalled transfer, are retried. */
const nonRetryableErrorTypes = [
  'INVALID_ARGUMENT',
  'UNAUTHENTICATED',
  'NOT_FOUND',
  'FAILED_PRECONDITION',
  'PERMISSION_DENIED',
  'HOST_KEY_MISMATCH',
  'NVUE_APPLY_FAILED',
  'NVUE_ACTION_FAILED',
];

/**
 * Switch activity stubs with the job's heartbeat and retry settings and a start-to-close budget for this kind of call.
 * A cancelled job ends once its running activity has stopped (it sees the cancel at a heartbeat), not at once: until
 * then the switch stays busy, so no other job reaches it while the satellite still works on it (the workflows tell
 * that from a failure with jobCancellation).
 */
export function switchActivities(
  t: ActivityTimeouts,
  startToCloseTimeoutS = t.startToCloseTimeoutS,
  cancellationType: ActivityCancellationType = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
) {
  return proxyActivities<SwitchActivities & Pick<FirmwareActivities, 'fetchArtifact'>>({
    heartbeatTimeout: `${t.heartbeatTimeoutS}s`,
    startToCloseTimeout: `${startToCloseTimeoutS}s`,
    cancellationType,
    retry: {
      initialInterval: '2s',
      backoffCoefficient: 2,
      maximumInterval: '60s',
      maximumAttempts: t.maximumAttempts,
      nonRetryableErrorTypes,
    },
  });
}

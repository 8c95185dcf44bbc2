import { proxyActivities } from '@temporalio/workflow';
import type { ActivityTimeouts, DeviceActivities } from '@fleet/domain';

/** Activity stubs with the job's timeouts; errors that will never succeed are not retried. */
export function deviceActivities(t: ActivityTimeouts) {
  return proxyActivities<DeviceActivities>({
    heartbeatTimeout: `${t.heartbeatTimeoutS}s`,
    startToCloseTimeout: `${t.startToCloseTimeoutS}s`,
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      maximumAttempts: t.maximumAttempts,
      nonRetryableErrorTypes: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'NOT_FOUND', 'FAILED_PRECONDITION'],
    },
  });
}

import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { ActivityTimeouts, DeviceActivities } from '@fleet/domain';

/** Activity options from the job's timeouts; errors that will never succeed (and `alsoFinal`) are not retried. */
export function jobActivityOptions(t: ActivityTimeouts, alsoFinal: string[] = []): ActivityOptions {
  return {
    heartbeatTimeout: `${t.heartbeatTimeoutS}s`,
    startToCloseTimeout: `${t.startToCloseTimeoutS}s`,
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      maximumAttempts: t.maximumAttempts,
      nonRetryableErrorTypes: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'NOT_FOUND', 'FAILED_PRECONDITION', ...alsoFinal],
    },
  };
}

/** Activity stubs with the job's timeouts. */
export function deviceActivities(t: ActivityTimeouts) {
  return proxyActivities<DeviceActivities>(jobActivityOptions(t));
}

import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities, upsertMemo } from '@temporalio/workflow';
import type { DevicePowerInput, DevicePowerResult, JobError, JobMemo, PowerActivities } from '@fleet/domain';
import { jobMemoKey } from '@fleet/domain/workflow-safe';

function publish(memo: JobMemo): void {
  upsertMemo({ [jobMemoKey]: memo });
}

/** Turns whatever ended the workflow into the job error the hub shows. */
export function jobErrorFrom(err: unknown): JobError {
  if (isCancellation(err)) return { code: 'CANCELLED', message: 'the job was cancelled' };
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    return {
      code: cause.type ?? 'INTERNAL',
      message: cause.message,
      ...(cause.details?.length ? { details: cause.details[0] } : {}),
    };
  }
  return { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) };
}

/**
 * One power action on one device. The satellite activity does the device I/O; this
 * workflow only orders it and publishes progress, result and error in its memo, which
 * the workflow agent projects into Postgres.
 */
export async function devicePower(input: DevicePowerInput): Promise<DevicePowerResult> {
  const { setDevicePower } = proxyActivities<PowerActivities>({
    heartbeatTimeout: `${input.activity.heartbeatTimeoutS}s`,
    startToCloseTimeout: `${input.activity.startToCloseTimeoutS}s`,
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      maximumAttempts: input.activity.maximumAttempts,
      nonRetryableErrorTypes: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'NOT_FOUND', 'FAILED_PRECONDITION'],
    },
  });
  publish({ progress: { stage: 'power', message: `${input.action} on ${input.target.deviceId}` } });
  try {
    const result = await setDevicePower({
      target: input.target,
      action: input.action,
      settleTimeoutS: input.settleTimeoutS,
    });
    publish({ progress: { stage: 'done', percent: 100 }, result: { ...result } });
    return result;
  } catch (err) {
    const error = jobErrorFrom(err);
    publish({ progress: { stage: 'power', message: error.message }, error });
    if (isCancellation(err)) throw err;
    throw ApplicationFailure.nonRetryable(error.message, String(error.code));
  }
}

import { ApplicationFailure, upsertMemo } from '@temporalio/workflow';
import type {
  BmcResetResult,
  DeviceBmcResetInput,
  DevicePowerRefreshInput,
  DeviceReading,
  JobMemo,
} from '@fleet/domain';
import { jobMemoKey } from '@fleet/domain/workflow-safe';
import { deviceActivities } from './activities.js';
import { jobCancellation } from './cancellation.js';
import { jobErrorFrom } from './device-power.js';

const publish = (memo: JobMemo) => upsertMemo({ [jobMemoKey]: memo });

export async function published<T extends object>(stage: string, message: string, run: () => Promise<T>): Promise<T> {
  publish({ progress: { stage, message } });
  try {
    const result = await run();
    publish({ progress: { stage: 'done', percent: 100 }, result: { ...(result as Record<string, unknown>) } });
    return result;
  } catch (err) {
    const cancellation = jobCancellation(err);
    const error = jobErrorFrom(cancellation ?? err);
    publish({ progress: { stage, message: error.message }, error });
    if (cancellation) throw cancellation;
    throw ApplicationFailure.nonRetryable(error.message, String(error.code));
  }
}

/** Manager.Reset of a device's BMC (or a compute tray's HMC), waiting until it answers again. */
export async function deviceBmcReset(input: DeviceBmcResetInput): Promise<BmcResetResult> {
  const { resetBmc } = deviceActivities(input.activity);
  return published('bmc_reset', `${input.manager} reset on ${input.target.deviceId}`, () =>
    resetBmc({ target: input.target, manager: input.manager, waitUntilBackS: input.waitUntilBackS }),
  );
}

/** Reads a device's power state now (the hub shows the last reading). */
export async function devicePowerRefresh(input: DevicePowerRefreshInput): Promise<DeviceReading> {
  const { readDevicePower } = deviceActivities(input.activity);
  return published('read', `power state of ${input.target.deviceId}`, () => readDevicePower({ target: input.target }));
}

import { proxyActivities } from '@temporalio/workflow';
import type { DevicePowerRefreshInput, FirmwareActivities, FirmwareInventoryReading } from '@fleet/domain';
import { published } from './device-maintenance.js';

/** Reads a device's installed firmware versions (the hub's compliance view shows the last reading). */
export async function deviceFirmwareRefresh(input: DevicePowerRefreshInput): Promise<FirmwareInventoryReading> {
  const { readFirmwareInventory } = proxyActivities<FirmwareActivities>({
    startToCloseTimeout: `${input.activity.startToCloseTimeoutS}s`,
    retry: {
      maximumAttempts: input.activity.maximumAttempts,
      nonRetryableErrorTypes: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'NOT_FOUND', 'FAILED_PRECONDITION'],
    },
  });
  return published('read', `firmware inventory of ${input.target.deviceId}`, () =>
    readFirmwareInventory({ target: input.target }),
  );
}

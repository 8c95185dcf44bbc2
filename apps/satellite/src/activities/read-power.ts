import type { DeviceActivities } from '@fleet/domain';
import { openDriver, type DeviceActivityDeps } from './context.js';
import { toActivityFailure } from './failures.js';

export function createReadPowerActivity(deps: DeviceActivityDeps): Pick<DeviceActivities, 'readDevicePower'> {
  return {
    async readDevicePower({ target }) {
      const driver = await openDriver(deps, target);
      try {
        return { deviceId: target.deviceId, ...(await driver.probe()) };
      } catch (err) {
        throw toActivityFailure(err, target.deviceId);
      } finally {
        await driver.close();
      }
    },
  };
}

import { Context } from '@temporalio/activity';
import { healthCleared, type HealthReading, type RemediationActivities } from '@fleet/domain';
import { openDriver, type DeviceActivityDeps } from './context.js';

/** Health checks for remediation steps and releases (docs/day2.md). */
export function createRemediationActivities(deps: DeviceActivityDeps): RemediationActivities {
  return {
    async awaitHealthy({ target, faultClass, timeoutS, pollS }) {
      const ctx = Context.current();
      const driver = await openDriver(deps, target);
      try {
        const deadline = Date.now() + timeoutS * 1000;
        for (;;) {
          const reading: HealthReading = await driver.readHealth();
          ctx.heartbeat({ reachable: reading.reachable, faults: reading.faults.length });
          if (healthCleared(reading, faultClass) || Date.now() + pollS * 1000 > deadline) return reading;
          await ctx.sleep(pollS * 1000);
        }
      } finally {
        await driver.close().catch(() => undefined);
      }
    },
  };
}

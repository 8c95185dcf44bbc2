import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AwaitCondition, AwaitDevicesResult, BmcTarget, DeviceActivities, DeviceProbe } from '@fleet/domain';
import type { NodeDriver } from '@fleet/drivers';
import { attemptLog, openDriver, pause, type DeviceActivityDeps } from './context.js';
import { failureSummary } from './failures.js';

const meets: Record<AwaitCondition, (p: DeviceProbe) => boolean> = {
  off: (p) => p.reachable && p.powerState === 'Off',
  on: (p) => p.reachable && p.powerState === 'On',
  unreachable: (p) => !p.reachable,
  reachable: (p) => p.reachable,
};

interface Watched {
  target: BmcTarget;
  driver?: NodeDriver;
  last: DeviceProbe | null;
  met: boolean;
  error?: { type: string; message: string };
}

export interface AwaitProgress {
  met: number;
  of: number;
}

export function createAwaitDevicesActivity(deps: DeviceActivityDeps): Pick<DeviceActivities, 'awaitDevices'> {
  return {
    async awaitDevices({ targets, condition, pollIntervalS, maxWaitS }) {
      if (!(pollIntervalS > 0) || !(maxWaitS >= 0) || !(condition in meets)) {
        throw ApplicationFailure.create({
          type: 'INVALID_ARGUMENT',
          message:
            `awaitDevices: bad input (condition ${condition}, pollIntervalS ${pollIntervalS}, maxWaitS ` +
            `${maxWaitS})`,
          nonRetryable: true,
        });
      }
      const ctx = Context.current();
      const log = attemptLog(deps, { condition, devices: targets.length });
      const started = Date.now();
      const deadline = started + maxWaitS * 1000;
      const watched: Watched[] = targets.map((target) => ({ target, last: null, met: false }));
      const progress = (): AwaitProgress => ({ met: watched.filter((w) => w.met).length, of: watched.length });

      // One probe per device at a time (its driver serialises its BMC); devices in parallel.
      // A device that met the condition is not asked again; one that cannot be asked at
      // all (credentials, unknown type, TLS) is given up on, as waiting will not change it.
      const observe = async (w: Watched) => {
        try {
          w.driver ??= await openDriver(deps, w.target);
          w.last = await w.driver.probe();
          w.met = meets[condition](w.last);
        } catch (err) {
          if (ctx.cancellationSignal.aborted) throw err;
          w.error = failureSummary(err, w.target.deviceId);
        }
        ctx.heartbeat(progress());
      };

      try {
        for (;;) {
          const pending = watched.filter((w) => !w.met && !w.error);
          // Racing `cancelled` stops the wait at once even while a probe is on the wire.
          await Promise.race([Promise.all(pending.map(observe)), ctx.cancelled]);
          ctx.heartbeat(progress());
          const left = deadline - Date.now();
          if (watched.every((w) => w.met || w.error) || left <= 0) break;
          await pause(Math.min(pollIntervalS * 1000, left), progress());
        }
      } finally {
        await Promise.all(watched.map((w) => w.driver?.close()));
      }

      const result: AwaitDevicesResult = {
        condition,
        met: watched.filter((w) => w.met).map((w) => w.target.deviceId),
        notMet: watched
          .filter((w) => !w.met)
          .map((w) => ({ deviceId: w.target.deviceId, last: w.last, ...(w.error ? { error: w.error } : {}) })),
        elapsedS: (Date.now() - started) / 1000,
      };
      log.info({ met: result.met.length, notMet: result.notMet.length, elapsedS: result.elapsedS }, 'wait ended');
      return result;
    },
  };
}

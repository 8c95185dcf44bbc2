import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import {
  isPowerActionSatisfied,
  settledStateFor,
  type PowerActivities,
  type PowerAction,
  type PowerState,
} from '@fleet/domain';
import { journalKey } from '../journal/action-journal.js';
import { attemptLog, openDriver, type DeviceActivityDeps } from './context.js';
import { toActivityFailure } from './failures.js';

/** What an attempt records in its heartbeat, so the next attempt never resets twice. */
interface PowerHeartbeat {
  resetSent: boolean;
  leftOn?: boolean;
  state?: PowerState;
}

const cycles: readonly PowerAction[] = ['power-cycle', 'graceful-restart', 'force-restart'];

export function createPowerActivities(deps: DeviceActivityDeps): PowerActivities {
  return {
    async setDevicePower({ target, action, settleTimeoutS }) {
      const ctx = Context.current();
      const prior = ctx.info.heartbeatDetails as PowerHeartbeat | undefined;
      const log = attemptLog(deps, { deviceId: target.deviceId });
      const driver = await openDriver(deps, target);
      try {
        // Per node type: a shelf's "off" is a ForceOff of its output, a tray's a graceful shutdown.
        const resetType = driver.resetTypeFor(action);
        let state = await driver.powerState();
        // The heartbeat says so when it reached Temporal; the journal also when it did not (a cut, a crash).
        const key = journalKey(ctx.info);
        const journaled = deps.journal.sent(key);
        let resetSent = prior?.resetSent === true || journaled !== undefined;
        if (resetSent && !prior?.resetSent)
          log.info({ action, sentAt: journaled!.at }, 'an earlier attempt sent the reset');
        let leftOn = prior?.leftOn ?? false;
        const goal = settledStateFor[action];
        const isCycle = cycles.includes(action);

        if (!resetSent) {
          if (isPowerActionSatisfied(action, state)) {
            log.info({ action, state }, 'device already in the asked state; nothing sent');
            return { deviceId: target.deviceId, action, powerState: state, resetSent: false };
          }
          const alreadyMoving = !isCycle && state === (goal === 'On' ? 'PoweringOn' : 'PoweringOff');
          if (!alreadyMoving) {
            await driver.reset(resetType);
            await deps.journal.record({ key, deviceId: target.deviceId, action: `reset:${resetType}` });
            deps.onReset?.(target.nodeType, action);
            log.info({ action, resetType, from: state }, 'reset sent');
          }
          resetSent = true;
        }
        ctx.heartbeat({ resetSent, leftOn, state } satisfies PowerHeartbeat);

        // A cycle is complete once the host has left On and come back; a BMC that
        // restarts the host without ever reporting another state counts once the
        // departure window has passed.
        const started = Date.now();
        const departureWindowMs = Math.min(10_000, settleTimeoutS * 500);
        for (;;) {
          state = await driver.powerState();
          if (state !== 'On') leftOn = true;
          const cycleDone = !isCycle || leftOn || Date.now() - started > departureWindowMs;
          if (state === goal && cycleDone) break;
          if (Date.now() - started > settleTimeoutS * 1000) {
            throw ApplicationFailure.create({
              type: 'DEADLINE_EXCEEDED',
              message: `${target.deviceId}: power state still ${state} ${settleTimeoutS}s after ${action}`,
              details: [{ deviceId: target.deviceId, bmc: target.bmcUrl, state }],
            });
          }
          ctx.heartbeat({ resetSent, leftOn, state } satisfies PowerHeartbeat);
          await ctx.sleep(deps.pollIntervalMs);
        }
        log.info({ action, state }, 'device settled');
        return { deviceId: target.deviceId, action, powerState: state, resetSent: true };
      } catch (err) {
        throw toActivityFailure(err, target.deviceId);
      } finally {
        await driver.close();
      }
    },
  };
}

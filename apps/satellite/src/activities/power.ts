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
import { attemptLog, openDriver, pause, type DeviceActivityDeps } from './context.js';
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
        const key = journalKey(ctx.info);
        let leftOn = prior?.leftOn ?? false;
        const goal = settledStateFor[action];
        const isCycle = cycles.includes(action);
        // Read, decide and send alone among this activity's attempts (a late one may run beside its retry).
        const decided = await deps.journal.exclusive(key, async () => {
          const state = await driver.powerState();
          // The heartbeat says so when it reached Temporal; the journal also when it did not (a cut, a crash).
          const journaled = deps.journal.sent(key);
          if (prior?.resetSent) return { state, resetSent: true };
          if (journaled) {
            log.info({ action, sentAt: journaled.at }, 'an earlier attempt sent the reset');
            return { state, resetSent: true };
          }
          if (isPowerActionSatisfied(action, state)) {
            log.info({ action, state }, 'device already in the asked state; nothing sent');
            return { state, resetSent: false, nothingToDo: true };
          }
          const alreadyMoving = !isCycle && state === (goal === 'On' ? 'PoweringOn' : 'PoweringOff');
          if (alreadyMoving) return { state, resetSent: true };
          await driver.reset(resetType);
          const sentAt = performance.now();
          await deps.journal.record({ key, deviceId: target.deviceId, action: `reset:${resetType}` });
          deps.onReset?.(target.nodeType, action);
          log.info({ action, resetType, from: state }, 'reset sent');
          return { state, resetSent: true, sentAt };
        });
        let state = decided.state;
        if (decided.nothingToDo) return { deviceId: target.deviceId, action, powerState: state, resetSent: false };
        const resetSent = decided.resetSent;
        ctx.heartbeat({ resetSent, leftOn, state } satisfies PowerHeartbeat);
        const started = Date.now();
        // An on or off this attempt sent is timed, and not asked about before most of what such a change took lately (a
        // cycle is polled from the start: its departure from On is what it watches for).
        const sentAt = isCycle ? undefined : decided.sentAt;
        if (sentAt !== undefined && deps.settleTimes) {
          const waitMs = Math.min(deps.settleTimes.waitMs(target.nodeType, action), settleTimeoutS * 500);
          if (waitMs > 0) await pause(waitMs, { resetSent, leftOn, state } satisfies PowerHeartbeat);
        }

        // A cycle is complete once the host has left On and come back; a BMC that
        // restarts the host without ever reporting another state counts once the
        // departure window has passed.
        const departureWindowMs = Math.min(10_000, settleTimeoutS * 500);
        let askedAt: number;
        for (;;) {
          askedAt = performance.now();
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
        if (sentAt !== undefined) {
          // Up to the poll that saw it: what the poll's own answer took is the BMC's latency, not the device's.
          const ms = askedAt - sentAt;
          deps.settleTimes?.record(target.nodeType, action, ms);
          deps.onSettled?.(target.nodeType, action, ms / 1000);
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

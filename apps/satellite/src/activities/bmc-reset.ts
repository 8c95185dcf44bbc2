import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { DeviceActivities, ManagerKind } from '@fleet/domain';
import type { NodeDriver } from '@fleet/drivers';
import { RedfishError } from '@fleet/redfish';
import { attemptLog, openDriver, pause, type DeviceActivityDeps } from './context.js';
import { toActivityFailure } from './failures.js';

/** What an attempt records in its heartbeat, so no retry reboots the controller a second time. */
export interface BmcResetHeartbeat {
  /** The request was about to go out; a later attempt finding only this cannot know whether it arrived. */
  sending?: boolean;
  resetSent: boolean;
  sentAtMs?: number;
  outageSeen: boolean;
  last?: string;
}

/** Sends Manager.Reset unless the controller is already down from a request whose answer was lost. */
async function sendReset(
  driver: NodeDriver,
  manager: ManagerKind,
  prior: BmcResetHeartbeat | undefined,
): Promise<BmcResetHeartbeat> {
  const downNow = async () => {
    const p = await driver.probeManager(manager);
    return p.reachable ? undefined : p.reason;
  };
  if (prior?.sending) {
    const reason = await downNow();
    if (reason) return { resetSent: true, sentAtMs: Date.now(), outageSeen: true, last: reason };
  }
  Context.current().heartbeat({ sending: true, resetSent: false, outageSeen: false } satisfies BmcResetHeartbeat);
  try {
    await driver.resetManager(manager);
  } catch (err) {
    // A lost answer (timeout, dropped connection) may hide a reset that happened: a
    // controller that stopped answering took it, so it is not sent again.
    if (!(err instanceof RedfishError && err.retryable)) throw err;
    const reason = await downNow();
    if (!reason) throw err;
    return { resetSent: true, sentAtMs: Date.now(), outageSeen: true, last: reason };
  }
  return { resetSent: true, sentAtMs: Date.now(), outageSeen: false };
}

export function createBmcResetActivity(deps: DeviceActivityDeps): Pick<DeviceActivities, 'resetBmc'> {
  return {
    async resetBmc({ target, manager, waitUntilBackS }) {
      const ctx = Context.current();
      const prior = ctx.info.heartbeatDetails as BmcResetHeartbeat | undefined;
      const log = attemptLog(deps, { deviceId: target.deviceId, manager });
      const driver = await openDriver(deps, target);
      try {
        let beat = prior?.resetSent ? prior : await sendReset(driver, manager, prior);
        if (!prior?.resetSent) {
          deps.onManagerReset?.(target.nodeType, manager);
          log.info({ outageSeen: beat.outageSeen }, 'Manager.Reset sent');
        }
        ctx.heartbeat(beat);

        // A controller seen down and answering again is back. One never seen down (a reboot
        // quicker than the poll, or one that happened between attempts) counts once a
        // departure window has passed with it answering.
        const sentAt = beat.sentAtMs ?? Date.now();
        const departureMs = Math.min(60_000, waitUntilBackS * 250);
        let outageSeen = beat.outageSeen;
        for (;;) {
          const p = await driver.probeManager(manager);
          if (!p.reachable) outageSeen = true;
          else if (outageSeen || Date.now() - sentAt >= departureMs) {
            const backAfterS = (Date.now() - sentAt) / 1000;
            log.info({ outageSeen, backAfterS }, 'controller answers again');
            return { deviceId: target.deviceId, manager, outageSeen, backAfterS };
          }
          const last = p.reachable ? 'still answering; waiting for it to go down' : p.reason;
          if (Date.now() - sentAt >= waitUntilBackS * 1000) {
            throw ApplicationFailure.create({
              type: 'DEADLINE_EXCEEDED',
              message:
                `${target.deviceId}: ${manager.toUpperCase()} not back ${waitUntilBackS}s after ` +
                `Manager.Reset (${last})`,
              details: [{ deviceId: target.deviceId, bmc: target.bmcUrl, manager, outageSeen }],
            });
          }
          beat = { resetSent: true, sentAtMs: sentAt, outageSeen, last };
          ctx.heartbeat(beat);
          await pause(deps.pollIntervalMs, beat);
        }
      } catch (err) {
        throw toActivityFailure(err, target.deviceId);
      } finally {
        await driver.close();
      }
    },
  };
}

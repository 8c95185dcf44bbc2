import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { DeviceActivities, ManagerKind } from '@fleet/domain';
import type { NodeDriver } from '@fleet/drivers';
import { RedfishError } from '@fleet/redfish';
import { journalKey } from '../journal/action-journal.js';
import { attemptLog, openDriver, pause, type DeviceActivityDeps } from './context.js';
import { toActivityFailure } from './failures.js';
import { heartbeatEveryMs } from '../heartbeat-every.js';

/** What an attempt records in its heartbeat, so no retry reboots the controller a second time. */
export interface BmcResetHeartbeat {
  /** The request was about to go out; a later attempt finding only this cannot know whether it arrived. */
  sending?: boolean;
  /**
   * Whether the controller answered before the request went out. A later attempt that finds it down takes that as the
   * reset having arrived only if it was up before: a controller that was hung already says nothing by being down.
   */
  upBefore?: boolean;
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
  beat: (details: BmcResetHeartbeat) => void,
): Promise<BmcResetHeartbeat> {
  const downNow = async () => {
    const p = await driver.probeManager(manager);
    return p.reachable ? undefined : p.reason;
  };
  const down = await downNow();
  // A heartbeat from before upBefore was recorded counts as up: the reset is never sent twice to a BMC that took it.
  if (prior?.sending && prior.upBefore !== false && down)
    return { resetSent: true, sentAtMs: Date.now(), outageSeen: true, last: down };
  const upBefore = down === undefined;
  beat({ sending: true, upBefore, resetSent: false, outageSeen: false });
  try {
    await driver.resetManager(manager);
  } catch (err) {
    // A lost answer (timeout, dropped connection) may hide a reset that happened: a controller that answered before
    // and stopped answering took it, so it is not sent again. One that was hung before proves nothing by that.
    if (!(err instanceof RedfishError && err.retryable) || !upBefore) throw err;
    const reason = await downNow();
    if (!reason) throw err;
    return { resetSent: true, sentAtMs: Date.now(), outageSeen: true, last: reason };
  }
  // A hung controller was down before the reset: its outage is not news, only its return is.
  return { resetSent: true, sentAtMs: Date.now(), outageSeen: !upBefore };
}

export function createBmcResetActivity(deps: DeviceActivityDeps): Pick<DeviceActivities, 'resetBmc'> {
  return {
    async resetBmc({ target, manager, waitUntilBackS }) {
      const ctx = Context.current();
      const log = attemptLog(deps, { deviceId: target.deviceId, manager });
      const key = journalKey(ctx.info);
      const heartbeat = ctx.info.heartbeatDetails as BmcResetHeartbeat | undefined;
      const driver = await openDriver(deps, target);
      // Liveness on a clock while the reset goes out (reaching a hung controller can take several request timeouts),
      // always with the latest details.
      let latest = heartbeat;
      const beatNow = (details: BmcResetHeartbeat) => ctx.heartbeat((latest = details));
      const ticker = setInterval(() => ctx.heartbeat(latest), heartbeatEveryMs(ctx.info));
      try {
        // Decided alone among this activity's attempts (a late one may run beside its retry). The journal knows of a
        // reset whose heartbeat never reached Temporal (a site cut off, a crash).
        let beat = await deps.journal
          .exclusive(key, async () => {
            if (heartbeat?.resetSent) return heartbeat;
            const journaled = deps.journal.sent(key);
            if (journaled) {
              log.info({ sentAt: journaled.at }, 'an earlier attempt sent Manager.Reset');
              return { resetSent: true, sentAtMs: journaled.at, outageSeen: false } satisfies BmcResetHeartbeat;
            }
            const sent = await sendReset(driver, manager, heartbeat, beatNow);
            await deps.journal.record({ key, deviceId: target.deviceId, action: `manager-reset:${manager}` });
            deps.onManagerReset?.(target.nodeType, manager);
            log.info({ outageSeen: sent.outageSeen }, 'Manager.Reset sent');
            return sent;
          })
          .finally(() => clearInterval(ticker));
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
        clearInterval(ticker);
        await driver.close();
      }
    },
  };
}

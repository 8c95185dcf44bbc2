import { Context } from '@temporalio/activity';
import type { SwitchActivities } from '@fleet/domain';
import { getPlatformFirmware, isRetryableDuringReboot, powerCycle } from '@fleet/nvue';
import type { NvosAccess } from '../nvos/connect.js';
import { switchFailure } from '../switch/failures.js';
import { awaitReboot, type RebootProgress } from '../switch/reboot-wait.js';
import { attemptLog } from './context.js';
import { withNvue } from './nvos-image.js';

/** What a power-cycle attempt heartbeats once the request went out, so a retry only waits. */
export interface PowerCycleHeartbeat extends RebootProgress {
  actionId: string;
}

/**
 * powerCycleSwitch: the activation of switch-tray platform firmware
 * (docs/reference/rms-behaviours.md#firmware-activation): an NVUE power cycle, then the recovery probe,
 * GET /nvue_v1/platform/firmware every `probeIntervalS` up to `probes` times (45 × 15 s), riding over the refused
 * connections of the reboot.
 */
export function createSwitchPowerCycleActivity(deps: NvosAccess): Pick<SwitchActivities, 'powerCycleSwitch'> {
  return {
    async powerCycleSwitch({ target, probeIntervalS, probes }) {
      const ctx = Context.current();
      const log = attemptLog(deps, { deviceId: target.deviceId });
      try {
        return await withNvue(deps, target, async (c, signal) => {
          let sent = ctx.info.heartbeatDetails as PowerCycleHeartbeat | undefined;
          if (!sent) {
            sent = { actionId: await powerCycle(c, { signal }), sentAtMs: Date.now(), outageSeen: false };
            ctx.heartbeat(sent);
            log.info({ actionId: sent.actionId }, 'power cycle sent');
          }
          const { actionId } = sent;
          const back = await awaitReboot(sent, {
            deviceId: target.deviceId,
            back: 'answer to GET /nvue_v1/platform/firmware',
            isUp: () =>
              getPlatformFirmware(c, { signal }).then(
                () => true,
                (err: unknown) => {
                  if (isRetryableDuringReboot(err)) return false;
                  throw err;
                },
              ),
            pollMs: probeIntervalS * 1000,
            maxWaitMs: probes * probeIntervalS * 1000,
            details: (p): PowerCycleHeartbeat => ({ ...p, actionId }),
          });
          log.info(back, 'switch back after the power cycle');
          return { deviceId: target.deviceId, ...back };
        });
      } catch (err) {
        throw switchFailure(err, target.deviceId);
      }
    },
  };
}

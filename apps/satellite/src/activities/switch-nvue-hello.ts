import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { NvueHelloResult, SwitchActivities } from '@fleet/domain';
import { getSystem } from '@fleet/nvue';
import type { NvosAccess } from '../nvos/connect.js';
import { heartbeatWhile } from '../switch/heartbeat.js';
import { withNvue } from './nvos-image.js';

/**
 * nvueHello (cold reboot's verify_nvos_ready, docs/reference/rms-behaviours.md#nvos-hello): one GET /nvue_v1/system per
 * switch, all at once. A switch that does not answer is data, not a failure: the workflow waits out its backoff and
 * asks again. It heartbeats on a clock while any hello is pending: a booting switch that accepts TCP and then says
 * nothing holds its hello for the whole NVUE connect and request timeouts, longer than the heartbeat timeout.
 */
export function createNvueHelloActivity(deps: NvosAccess): Pick<SwitchActivities, 'nvueHello'> {
  return {
    async nvueHello({ targets }) {
      const ctx = Context.current();
      const result: NvueHelloResult = { answered: [], failed: [] };
      const progress = () => ({ answered: result.answered.length, failed: result.failed.length, of: targets.length });
      await heartbeatWhile(progress, () =>
        Promise.all(
          targets.map(async (target) => {
            try {
              await withNvue(deps, target, (c, signal) => getSystem(c, { signal }));
              result.answered.push(target.deviceId);
            } catch (err) {
              if (ctx.cancellationSignal.aborted) throw err;
              const f = err instanceof ApplicationFailure ? err : undefined;
              result.failed.push({
                deviceId: target.deviceId,
                error: { type: f?.type ?? 'INTERNAL', message: err instanceof Error ? err.message : String(err) },
                permanent: f?.nonRetryable ?? false,
              });
            }
          }),
        ),
      );
      deps.log.info({ answered: result.answered.length, failed: result.failed.map((f) => f.deviceId) }, 'nvue hello');
      return result;
    },
  };
}

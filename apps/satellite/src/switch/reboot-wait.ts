import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { pause } from '../activities/context.js';

/** Where a reboot an activity caused stands; heartbeated, so a retry goes on waiting instead of causing another. */
export interface RebootProgress {
  sentAtMs: number;
  outageSeen: boolean;
}

export interface RebootWait {
  deviceId: string;
  /** What being back means, for the timeout message (`a default-credential SSH login`). */
  back: string;
  /** One look: true once the switch is back, false while it is down or not ready yet. */
  isUp(): Promise<boolean>;
  pollMs: number;
  /** Counted from `sentAtMs`. */
  maxWaitMs: number;
  /** The heartbeat details for a progress (the activity's own marker around it). */
  details(progress: RebootProgress): unknown;
}

/**
 * Waits for a switch told to reboot to go down and come back. One seen down and then up is
 * back; one never seen down (a reboot quicker than the poll, or one between attempts) counts
 * once a departure window has passed with it up: what it runs is then for the caller to check.
 */
export async function awaitReboot(
  progress: RebootProgress,
  w: RebootWait,
): Promise<{ outageSeen: boolean; backAfterS: number }> {
  const departureMs = Math.min(60_000, w.maxWaitMs / 4);
  let { outageSeen } = progress;
  for (;;) {
    const up = await w.isUp();
    const elapsedMs = Date.now() - progress.sentAtMs;
    if (!up) outageSeen = true;
    else if (outageSeen || elapsedMs >= departureMs) return { outageSeen, backAfterS: elapsedMs / 1000 };
    if (elapsedMs >= w.maxWaitMs) {
      throw ApplicationFailure.create({
        type: 'DEADLINE_EXCEEDED',
        message:
          `${w.deviceId}: no ${w.back} within ${w.maxWaitMs / 1000}s of the reboot request ` +
          `(${outageSeen ? 'it went down' : 'no outage seen'})`,
        details: [{ deviceId: w.deviceId, outageSeen }],
      });
    }
    const details = w.details({ sentAtMs: progress.sentAtMs, outageSeen });
    Context.current().heartbeat(details);
    await pause(w.pollMs, details);
  }
}

import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import type { BmcTarget, ManagerKind, PowerAction } from '@fleet/domain';
import { driverFor, type BmcCredentials, type NodeDriver, type RedfishTransport } from '@fleet/drivers';
import { RedfishClient } from '@fleet/redfish';
import type { ActionJournal } from '../journal/action-journal.js';
import type { SettleTimes } from './settle-times.js';
import type { SecretStore } from '../secrets/index.js';
import { heartbeatEveryMs } from '../heartbeat-every.js';
import { toActivityFailure } from './failures.js';

/** What every device activity needs: the site's secrets, a logger, the Redfish transport and poll pacing. */
export interface DeviceActivityDeps {
  secrets: SecretStore;
  log: Logger;
  /** How often a settling device or a rebooting controller is polled. */
  pollIntervalMs: number;
  redfish: RedfishTransport;
  /** Device actions sent that no retry may send again, when the heartbeat saying so did not reach Temporal. */
  journal: ActionJournal;
  onReset?: (nodeType: string, action: PowerAction) => void;
  /** What power changes took lately, so a settle poll waits most of that first; without it, polls from the start. */
  settleTimes?: SettleTimes;
  /** A power on or off this satellite sent settled after `seconds`. */
  onSettled?: (nodeType: string, action: PowerAction, seconds: number) => void;
  onManagerReset?: (nodeType: string, manager: ManagerKind) => void;
}

/** The driver for a target, cancelled with the activity. Unknown types and credentials are typed failures. */
export async function openDriver(deps: DeviceActivityDeps, target: BmcTarget): Promise<NodeDriver> {
  try {
    const factory = driverFor(target.nodeType);
    const credentials = await deps.secrets.resolve(target.credentialRef);
    return factory({ target, credentials, signal: Context.current().cancellationSignal, redfish: deps.redfish });
  } catch (err) {
    throw toActivityFailure(err, target.deviceId);
  }
}

export function attemptLog(deps: { log: Logger }, fields: Record<string, unknown>): Logger {
  const { info } = Context.current();
  return deps.log.child({
    ...fields,
    workflowId: info.workflowExecution?.workflowId,
    activityId: info.activityId,
    attempt: info.attempt,
  });
}

/**
 * Sleeps `ms`, heartbeating `details` as often as the heartbeat timeout asks (heartbeatEveryMs) and once more at the
 * end, so what follows the pause (a slow request) starts from a fresh beat; throws CancelledFailure on cancellation.
 */
export async function pause(ms: number, details: unknown): Promise<void> {
  const ctx = Context.current();
  const every = heartbeatEveryMs(ctx.info);
  for (let left = ms; left > 0; left -= every) {
    await ctx.sleep(Math.min(left, every));
    ctx.heartbeat(details);
  }
}

/** A plain Redfish client for a target (calls no driver makes), cancelled with the activity. */
export function redfishClientFor(
  deps: Pick<DeviceActivityDeps, 'redfish'>,
  target: BmcTarget,
  credentials: BmcCredentials,
  auth?: 'session',
): RedfishClient {
  return new RedfishClient({
    baseUrl: target.bmcUrl,
    credentials,
    device: target.deviceId,
    ...deps.redfish,
    ...(auth ? { auth } : {}),
    signal: Context.current().cancellationSignal,
  });
}

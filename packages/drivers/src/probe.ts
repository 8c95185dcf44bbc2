import type { DeviceProbe, PowerState } from '@fleet/domain';
import { RedfishError, type RedfishErrorCode } from '@fleet/redfish';
import type { ManagerProbe } from './types.js';

/**
 * Failures that mean "the BMC is not answering (yet)": no connection, no answer in time, 503/502, 5xx, or an answer
 * that is not Redfish (a BMC half-way through booting serves those; waiting or a BMC reset is the remedy for both).
 * The error's own code still tells them apart in the reason.
 */
export const notAnswering: ReadonlySet<RedfishErrorCode> = new Set<RedfishErrorCode>([
  'Timeout',
  'Unavailable',
  'Internal',
  'Protocol',
]);

/**
 * A failure as the reason a BMC is unreachable. Anything else (credentials, TLS, a missing
 * resource, cancellation) is rethrown: waiting will not fix it, so a gate must not count it.
 */
function unreachableReason(err: unknown): string {
  if (err instanceof RedfishError && notAnswering.has(err.code)) return err.message;
  throw err;
}

/** RMS reachability: the power query answers with a state. */
export async function probePower(read: () => Promise<PowerState>): Promise<DeviceProbe> {
  let state: PowerState;
  try {
    state = await read();
  } catch (err) {
    return { reachable: false, reason: unreachableReason(err) };
  }
  return state === 'Unknown'
    ? { reachable: false, reason: 'the BMC reports no power state' }
    : { reachable: true, powerState: state };
}

export async function probeAnswer(read: () => Promise<unknown>): Promise<ManagerProbe> {
  try {
    await read();
    return { reachable: true };
  } catch (err) {
    return { reachable: false, reason: unreachableReason(err) };
  }
}

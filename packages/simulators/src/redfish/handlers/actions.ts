import { isResetType, type SimulatedBmc } from '../bmc.js';
import { redfishError } from '../errors.js';
import { isObject, type Reply } from '../http-util.js';
import { allowedResetTypes } from '../quirks.js';

/** The profile's power action: ComputerSystem.Reset on trays, Chassis.Reset on power shelves. */
export function powerReset(bmc: SimulatedBmc, body: unknown): Reply {
  const { actionName } = bmc.profile.power;
  const resetTypes = allowedResetTypes(bmc);
  const resetType = isObject(body) ? body['ResetType'] : undefined;
  if (resetType === undefined) throw redfishError(400, 'ActionParameterMissing', [actionName, 'ResetType']);
  if (!isResetType(resetType) || !resetTypes.includes(resetType)) {
    throw redfishError(400, 'ActionParameterValueNotInList', [String(resetType), 'ResetType', actionName]);
  }
  bmc.reset(resetType);
  return { status: 204 };
}

const MANAGER_RESET_TYPES = ['GracefulRestart', 'ForceRestart'];

/** Manager.Reset reboots the BMC: it answers 503 until it is back. */
export function managerReset(bmc: SimulatedBmc, body: unknown): Reply {
  const resetType = isObject(body) ? (body['ResetType'] ?? 'GracefulRestart') : 'GracefulRestart';
  if (typeof resetType !== 'string' || !MANAGER_RESET_TYPES.includes(resetType)) {
    throw redfishError(400, 'ActionParameterValueNotInList', [String(resetType), 'ResetType', 'Manager.Reset']);
  }
  // Reboot after the answer leaves, as a real BMC acknowledges the action first.
  setImmediate(() => bmc.rebootManager());
  return { status: 204 };
}

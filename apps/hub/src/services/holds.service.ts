import { heldDevices, type DbOrTx } from '@fleet/db';
import { actsOnHeldDevices, holdText, type DeviceHold } from '@fleet/domain';
import { ApiError } from '../errors.js';
import { heldDeviceView, type OverrideQuarantine } from '../hold-override.js';

/** Held devices a refusal names in its message; its details name up to DETAILED. */
const NAMED = 20;
const DETAILED = 50;

/**
 * The 409 for a request that would act on held devices without an override, naming each and why it is held; `target`
 * (a rack) leads the message when the request names more than the devices.
 */
export function heldConflict(holds: DeviceHold[], target?: string): ApiError {
  const named = holds.slice(0, NAMED).map((h) => `${h.name} is ${holdText(h)}`);
  const more = holds.length > named.length ? `; and ${holds.length - named.length} more` : '';
  const count = holds.length === 1 ? '' : `${holds.length} devices are held: `;
  return new ApiError(
    'CONFLICT',
    `${target ? `${target}: ` : ''}${count}${named.join('; ')}${more}. Only remediation acts on a held device; send ` +
      'override_quarantine: {reason} to act on it anyway',
    holds.slice(0, DETAILED).map((h) => ({ field: `device/${h.deviceId}`, issue: holdText(h) })),
  );
}

/** What the audit row of a request with an override records: its reason and the held devices it let through. */
export function overrideAudit(override: OverrideQuarantine | undefined, holds: DeviceHold[]) {
  return override ? { override_quarantine: { reason: override.reason, devices: holds.map(heldDeviceView) } } : {};
}

/**
 * The holds a job of `kind` on `deviceIds` runs into: none for the kinds that act on held devices (remediation, reads),
 * else the held devices, one statement.
 */
export async function holdsFor(db: DbOrTx, kind: string, deviceIds: readonly string[]): Promise<DeviceHold[]> {
  return actsOnHeldDevices(kind) ? [] : heldDevices(db, deviceIds);
}

/**
 * Refuses a job of `kind` on one held device (409) unless the caller overrides the hold; answers the holds overridden
 * (none when the device is not held or the kind acts on held devices).
 */
export async function checkDeviceHold(
  db: DbOrTx,
  kind: string,
  deviceId: string,
  override: OverrideQuarantine | undefined,
): Promise<DeviceHold[]> {
  const holds = await holdsFor(db, kind, [deviceId]);
  if (holds.length && !override) throw heldConflict(holds);
  return holds;
}

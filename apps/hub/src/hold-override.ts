import { z } from 'zod';
import { holdText, type DeviceHold } from '@fleet/domain';

/**
 * The body field an operator sends to act on held devices (quarantined, remediating, rma) anyway. The reason is
 * required and kept in the request's audit row with the devices it let through.
 */
export const OverrideQuarantine = z
  .object({ reason: z.string().trim().min(1, 'give a reason').max(2000) })
  .strict()
  .describe(
    'Act on held devices (quarantined, remediating, rma) anyway; only remediation acts on them otherwise. The ' +
      'reason is kept in the audit log with the devices it let through',
  )
  .meta({ id: 'OverrideQuarantine' });
export type OverrideQuarantine = z.infer<typeof OverrideQuarantine>;

/** A held device as answers and audit rows list it: `reason` says the state, since when and why. */
export function heldDeviceView(h: DeviceHold) {
  return { device_id: h.deviceId, name: h.name, state: h.state, since: h.since.toISOString(), reason: holdText(h) };
}

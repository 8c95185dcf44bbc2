import { bmcCredentialSharing, getRack, rackDevices, type Db, type Device, type Job } from '@fleet/db';
import { ApiError } from '../errors.js';
import type { OverrideQuarantine } from '../hold-override.js';
import type { Caller } from './caller.js';
import { createJob } from './jobs.service.js';
import { createParentJob } from './parent-jobs.service.js';
import { operableDevice } from './inventory.service.js';

/**
 * Refuses (409) a BMC password rotation of any device whose BMC credential reference is not its own, naming each: the
 * satellite writes the new password under the reference, so a reference another device (or the device's own NVOS)
 * logs in with would lock those logins out, as a shared reference once locked a whole site out.
 */
export async function assertOwnBmcCredentials(db: Db, devices: Device[]): Promise<void> {
  const shared: { device: Device; reason: string }[] = [];
  for (const device of devices) {
    const reason = await bmcCredentialSharing(db, device);
    if (reason) shared.push({ device, reason });
  }
  if (!shared.length) return;
  throw new ApiError(
    'FAILED_PRECONDITION',
    shared.length === 1
      ? shared[0]!.reason
      : `${shared.length} devices log in with a BMC credential reference that is not their own: ` +
          shared.map((s) => s.reason).join('; '),
    shared.map((s) => ({
      field: 'credential_ref',
      issue: `device ${s.device.name} (${s.device.id}): must be a reference only this device's BMC uses`,
    })),
  );
}

/** One device's BMC password rotation, as a device job. */
export async function rotateDeviceBmcPassword(
  db: Db,
  caller: Caller,
  input: { device_id: string; override_quarantine?: OverrideQuarantine | undefined },
): Promise<Job> {
  const device = await operableDevice(db, input.device_id, 'rotate its BMC password');
  await assertOwnBmcCredentials(db, [device]);
  const { job } = await createJob(db, caller, {
    job: { kind: 'bmc.password_rotation', deviceId: device.id, siteId: device.siteId, params: {} },
    action: 'bmc.password_rotation',
    target: `device/${device.id}`,
    overrideQuarantine: input.override_quarantine,
  });
  return job;
}

/**
 * The BMC password rotation of every device of a rack, or of none: a rack job whose one workflow rotates them
 * `concurrency` at a time, with a child job per device for its outcome.
 */
export async function rotateRackBmcPasswords(
  db: Db,
  caller: Caller,
  input: { rack_id: string; concurrency: number; override_quarantine?: OverrideQuarantine | undefined },
): Promise<Job> {
  const rack = await getRack(db, input.rack_id);
  if (!rack) throw new ApiError('NOT_FOUND', `rack ${input.rack_id} does not exist`);
  const devices = await rackDevices(db, rack.id);
  if (!devices.length) throw new ApiError('FAILED_PRECONDITION', `rack ${rack.name} has no devices`);
  await assertOwnBmcCredentials(db, devices);
  const { job } = await createParentJob(db, caller, {
    parent: {
      kind: 'rack.bmc_password_rotation',
      siteId: rack.siteId,
      rackId: rack.id,
      params: { concurrency: input.concurrency },
    },
    devices,
    childParams: () => ({ sequence: 'rack.bmc_password_rotation' }),
    childKind: 'bmc.password_rotation',
    allOrNothing: true,
    childWorkflows: false,
    action: 'rack.bmc_password_rotation',
    target: `rack/${rack.id}`,
    overrideQuarantine: input.override_quarantine,
  });
  return job;
}

import { getDevice, type Db, type Device } from '@fleet/db';
import { missingForNvos } from '@fleet/domain';
import { ApiError, invalid, notFound } from '../errors.js';
import type { OverrideQuarantine } from '../hold-override.js';
import type { Gate, Outcome } from './approvals.service.js';
import type { Caller } from './caller.js';
import { createJob } from './jobs.service.js';

/** A live switch the inventory gives an NVOS endpoint, else a 404/409 saying why. */
export async function nvosDevice(db: Db, id: string, what: string): Promise<Device> {
  const device = await getDevice(db, id);
  if (!device) throw notFound('device', id);
  if (device.deletedAt)
    throw new ApiError('FAILED_PRECONDITION', `device ${device.name} was deleted from the inventory`);
  const missing = missingForNvos(device);
  if (missing.length)
    throw new ApiError(
      'FAILED_PRECONDITION',
      `device ${device.name} cannot ${what}: the inventory gives no ${missing.join(', ')}`,
    );
  return device;
}

export interface FactoryResetInput {
  device_id: string;
  confirm: string;
  override_quarantine?: OverrideQuarantine | undefined;
}

/** NVOS factory reset: the body repeats the device name; two-person rule switch.factory_reset. */
export async function factoryResetSwitch(
  db: Db,
  caller: Caller,
  gate: Gate,
  input: FactoryResetInput,
): Promise<Outcome> {
  const device = await nvosDevice(db, input.device_id, 'be reset');
  if (input.confirm !== device.name)
    throw invalid('body.confirm', `type the device name (${device.name}) to confirm a factory reset`);
  const target = `device/${device.id}`;
  const passed = await gate.pass(db, caller, {
    rule: 'switch.factory_reset',
    jobKind: 'switch.factory_reset',
    target,
    input: { ...input },
  });
  if ('approval' in passed) return passed;
  const { job } = await createJob(db, caller, {
    job: { kind: 'switch.factory_reset', deviceId: device.id, siteId: device.siteId, params: {} },
    action: 'switch.factory_reset',
    target,
    overrideQuarantine: input.override_quarantine,
    ...passed.options,
  });
  return { job };
}

import type { Device } from '@fleet/db';
import {
  missingForNvos,
  missingForOperation,
  parseHostPort,
  roleOfNodeType,
  type BmcTarget,
  type NvosTarget,
  type RackTargets,
} from '@fleet/domain';
import { MissingInventoryError, PermanentIntentError } from './errors.js';

/** The device as a BMC target; its Redfish system only when the inventory names one. */
export function deviceTarget(device: Device): BmcTarget {
  const missing = missingForOperation(device);
  if (missing.length || !device.nodeType || !device.bmcUrl || !device.credentialRef)
    throw new MissingInventoryError(device.name, missing);
  return {
    deviceId: device.id,
    nodeType: device.nodeType,
    bmcUrl: device.bmcUrl,
    credentialRef: device.credentialRef,
    ...(device.redfishSystemId ? { redfishSystemId: device.redfishSystemId } : {}),
  };
}

/** The device's NVOS side as a satellite target. `purpose` says what needs it, in the error. */
export function nvosTarget(device: Device, purpose?: string): NvosTarget {
  const missing = missingForNvos(device);
  const ssh = device.nvosSsh ? parseHostPort(device.nvosSsh) : undefined;
  const credentialRef = device.nvosCredentialRef ?? device.credentialRef;
  if (missing.length || !device.nvosUrl || !ssh || !credentialRef)
    throw new MissingInventoryError(device.name, missing, purpose);
  return {
    deviceId: device.id,
    nvueUrl: device.nvosUrl,
    ssh,
    credentialRef,
    ...(device.credentialRef ? { bmcCredentialRef: device.credentialRef } : {}),
    ...(device.nvosHostKey ? { hostKeyFingerprint: device.nvosHostKey } : {}),
  };
}

/** A rack job's devices by power class. Every device must be operable; the error names each one that is not. */
export function rackTargets(devices: Device[]): RackTargets {
  const targets: RackTargets = { shelves: [], switches: [], compute: [] };
  const problems: string[] = [];
  for (const d of [...devices].sort((a, b) => a.name.localeCompare(b.name))) {
    const t = unlessMissing(() => deviceTarget(d));
    if (t instanceof MissingInventoryError) {
      problems.push(`${d.name}: no ${t.missing.join(', ')}`);
      continue;
    }
    const role = roleOfNodeType(t.nodeType);
    if (role === 'power_shelf') targets.shelves.push(t);
    else if (role === 'switch') {
      targets.switches.push(t);
      // A cold reboot asks NVUE on the switch trays whose NVOS the inventory can reach.
      const nvos = unlessMissing(() => nvosTarget(d));
      if (!(nvos instanceof MissingInventoryError)) (targets.switchNvos ??= []).push(nvos);
    } else targets.compute.push(t);
  }
  if (problems.length)
    throw new PermanentIntentError('FAILED_PRECONDITION', `rack devices cannot be operated: ${problems.join('; ')}`);
  return targets;
}

/** A target, or the inventory gap that keeps the device from being one (for callers that go on without it). */
export function unlessMissing<T>(build: () => T): T | MissingInventoryError {
  try {
    return build();
  } catch (err) {
    if (err instanceof MissingInventoryError) return err;
    throw err;
  }
}

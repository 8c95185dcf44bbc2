import { and, isNull, ne, or, eq } from 'drizzle-orm';
import { sharedBmcCredential, sharedNvosCredential, type CredentialRefHolder } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { devices } from '../schema/index.js';

/** Live devices other than `exceptDeviceId` that log in with `ref`, as their BMC or their NVOS reference. */
export async function devicesUsingCredentialRef(
  db: DbOrTx,
  ref: string,
  exceptDeviceId: string,
): Promise<{ id: string; name: string; credentialRef: string | null; nvosCredentialRef: string | null }[]> {
  return db
    .select({
      id: devices.id,
      name: devices.name,
      credentialRef: devices.credentialRef,
      nvosCredentialRef: devices.nvosCredentialRef,
    })
    .from(devices)
    .where(
      and(
        ne(devices.id, exceptDeviceId),
        isNull(devices.deletedAt),
        or(eq(devices.credentialRef, ref), eq(devices.nvosCredentialRef, ref)),
      ),
    )
    .orderBy(devices.name);
}

/**
 * Why rotating the NVOS password of `device` would overwrite a secret another login uses (the domain's rule,
 * sharedNvosCredential, over the inventory as it is now), or undefined when its NVOS reference is its own. The hub
 * asks when the request arrives and the workflow agent again at dispatch: a NetBox sync in between can share it.
 */
export async function nvosCredentialSharing(
  db: DbOrTx,
  device: CredentialRefHolder & { id: string },
): Promise<string | undefined> {
  const users = device.nvosCredentialRef
    ? await devicesUsingCredentialRef(db, device.nvosCredentialRef, device.id)
    : [];
  return sharedNvosCredential(device, users);
}

/**
 * Why rotating the BMC password of `device` would overwrite a secret another login uses (the domain's rule,
 * sharedBmcCredential), or undefined when its BMC reference is its own; asked by the hub and again at dispatch.
 */
export async function bmcCredentialSharing(
  db: DbOrTx,
  device: CredentialRefHolder & { id: string },
): Promise<string | undefined> {
  const users = device.credentialRef ? await devicesUsingCredentialRef(db, device.credentialRef, device.id) : [];
  return sharedBmcCredential(device, users);
}

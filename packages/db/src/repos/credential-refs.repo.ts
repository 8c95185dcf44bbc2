import { and, isNull, ne, or, eq } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { devices } from '../schema/index.js';

/** Live devices other than `exceptDeviceId` that log in with `ref`, as their BMC or their NVOS reference. */
export async function devicesUsingCredentialRef(
  db: DbOrTx,
  ref: string,
  exceptDeviceId: string,
): Promise<{ id: string; name: string; credentialRef: string | null; nvosCredentialRef: string | null }[]> {
  return db
    .select({ id: devices.id, name: devices.name, credentialRef: devices.credentialRef, nvosCredentialRef: devices.nvosCredentialRef })
    .from(devices)
    .where(and(ne(devices.id, exceptDeviceId), isNull(devices.deletedAt), or(eq(devices.credentialRef, ref), eq(devices.nvosCredentialRef, ref))))
    .orderBy(devices.name);
}

import { nvosCredentialSharing, type DbOrTx, type Device } from '@fleet/db';
import { ApiError } from '../errors.js';

/**
 * Refuses (409) an NVOS password rotation whose reference is not the switch's own: the satellite writes the new
 * password under it, so a reference that is also a BMC's or another switch's would lock those logins out.
 */
export async function assertOwnNvosCredential(db: DbOrTx, device: Device): Promise<void> {
  const shared = await nvosCredentialSharing(db, device);
  if (shared)
    throw new ApiError('FAILED_PRECONDITION', shared, [
      { field: 'nvos_credential_ref', issue: 'must be a reference only this switch uses, for NVOS only' },
    ]);
}

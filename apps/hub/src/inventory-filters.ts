import { listDeviceRoles, type Db } from '@fleet/db';
import { invalid } from './errors.js';

/**
 * A role filter names NetBox role slugs, which NetBox defines rather than Fleet: the allowed values are the
 * roles the mirror holds, and a role none of its devices has is a 400 listing them (not an empty page).
 */
export async function checkRoleFilter(db: Db, roles: string[] | undefined, field: string): Promise<void> {
  if (!roles?.length) return;
  const known = await listDeviceRoles(db);
  const unknown = roles.filter((r) => !known.includes(r));
  if (unknown.length) {
    throw invalid(field, `no device has role ${unknown.join(', ')}; the inventory's roles are ${known.length ? known.join(', ') : 'none yet'}`);
  }
}

import { z } from 'zod';
import { listDeviceRoles, unheldDeviceRoles, type Db } from '@fleet/db';
import { invalid } from './errors.js';
import { repeated } from './pagination.js';

/** The role filter of device selections, documented with what checkRoleFilter below answers. */
export const roleFilter = repeated(z.string().min(1)).describe(
  'NetBox device role slugs (e.g. compute-tray); repeat for OR. NetBox defines the roles, not Fleet: the ' +
    "allowed values are the roles of the inventory's current (not deleted) devices, and a value no such " +
    'device has (a role NetBox defines but no device holds yet included) is a 400 whose message lists the ' +
    'known ones, not an empty result.',
);

/**
 * A role filter names NetBox role slugs, which NetBox defines rather than Fleet: the allowed values are the
 * roles the mirror holds, and a role none of its devices has is a 400 listing them (not an empty page). Roles that
 * `seen` (current devices, e.g. the page the filter selected) hold are known without asking; the rest are looked up
 * by the role index, and the full list of roles is read only to word the error.
 */
export async function checkRoleFilter(
  db: Db,
  roles: string[] | undefined,
  field: string,
  seen: readonly { role: string | null }[] = [],
): Promise<void> {
  if (!roles?.length) return;
  const held = new Set(seen.map((d) => d.role));
  const unseen = roles.filter((r) => !held.has(r));
  if (!unseen.length || !(await unheldDeviceRoles(db, unseen)).length) return;
  const known = await listDeviceRoles(db);
  const unknown = roles.filter((r) => !known.includes(r));
  if (unknown.length) {
    throw invalid(
      field,
      `no device has role ${unknown.join(', ')}; the inventory's roles are ` +
        `${known.length ? known.join(', ') : 'none yet'}`,
    );
  }
}

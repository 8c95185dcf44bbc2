import { z } from 'zod';
import { listDeviceRoles, unheldDeviceRoles, type ConditionFilter, type Db } from '@fleet/db';
import { conditionStatuses, conditionTypes, isConditionType, type ConditionStatus } from '@fleet/domain';
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
 * roles the mirror holds, and a role none of its devices has is a 400 listing them (not an empty page). The `seen`
 * roles (of current devices, e.g. the page the filter selected) are known without asking; the rest are looked up
 * by the role index, and the full list of roles is read only to word the error.
 */
export async function checkRoleFilter(
  db: Db,
  roles: string[] | undefined,
  field: string,
  seen: readonly (string | null)[] = [],
): Promise<void> {
  if (!roles?.length) return;
  const held = new Set(seen);
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

/** Zod's way of listing an enum's values in a 400, for filters checked by hand. */
const oneOf = (values: readonly string[]) => `expected one of ${values.map((v) => `"${v}"`).join('|')}`;

const isConditionStatus = (value: string): value is ConditionStatus =>
  (conditionStatuses as readonly string[]).includes(value);

/** A `condition` filter value, `Type=Status`, as the repository's ConditionFilter, or what is wrong with it. */
function parseCondition(value: string): ConditionFilter | string {
  const [type = '', status = '', ...rest] = value.split('=');
  if (!value.includes('=') || rest.length) return 'must be Type=Status, e.g. BurnInPassed=False';
  if (!isConditionType(type)) return `unknown condition type ${type}: ${oneOf(conditionTypes)}`;
  if (!isConditionStatus(status)) return `unknown condition status ${status}: ${oneOf(conditionStatuses)}`;
  return { type, status };
}

const conditionValue = z
  .string()
  .meta({ pattern: `^(${conditionTypes.join('|')})=(${conditionStatuses.join('|')})$` })
  .transform((value, ctx) => {
    const parsed = parseCondition(value);
    if (typeof parsed === 'object') return parsed;
    ctx.addIssue({ code: 'custom', message: parsed });
    return z.NEVER;
  });

/** The device list's condition filter, as the API conventions' filters are: a plain parameter, repeated for OR. */
export const conditionFilter = repeated(conditionValue).describe(
  'Devices holding a condition in a status, as Type=Status (e.g. BurnInPassed=False); repeat for OR. A device ' +
    'that has no condition of the type matches no status. An unknown type or status is a 400 listing the known ones.',
);

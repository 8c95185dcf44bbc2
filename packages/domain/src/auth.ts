import { z } from 'zod';

export const roles = ['viewer', 'operator', 'admin', 'facility'] as const;
export const Role = z.enum(roles);
export type Role = z.infer<typeof Role>;

/** What a route asks of a token: a role, or a list of roles any one of which lets the caller in. */
export type RoleRequirement = Role | readonly Role[];

/** The people's roles, in order; `facility` is not among them. */
const rank: Partial<Record<Role, number>> = { viewer: 0, operator: 1, admin: 2 };

/**
 * Roles are ordered: an admin can do what an operator can, an operator what a viewer can. `facility` (a building
 * management system's token, docs/day2.md "Facility events") stands outside that order: it passes only where a route
 * names it, so it reads nothing a viewer reads; an admin passes there too.
 */
export function roleAllows(held: Role, needed: RoleRequirement): boolean {
  if (typeof needed !== 'string') return needed.some((n) => roleAllows(held, n));
  if (held === needed || held === 'admin') return true;
  const h = rank[held];
  const n = rank[needed];
  return h !== undefined && n !== undefined && h >= n;
}

/** A requirement as a 403 names it: `viewer or facility`. */
export function describeRoleRequirement(needed: RoleRequirement): string {
  return typeof needed === 'string' ? needed : needed.join(' or ');
}

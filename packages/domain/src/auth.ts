import { z } from 'zod';

export const roles = ['viewer', 'operator', 'admin', 'facility', 'satellite'] as const;
export const Role = z.enum(roles);
export type Role = z.infer<typeof Role>;

/** What a route asks of a token: a role, or a list of roles any one of which lets the caller in. */
export type RoleRequirement = Role | readonly Role[];

/** The people's roles, in order; the machines' `facility` and `satellite` are not among them. */
const rank: Partial<Record<Role, number>> = { viewer: 0, operator: 1, admin: 2 };

/**
 * Roles are ordered: an admin can do what an operator can, an operator what a viewer can. `facility` (a building
 * management system's token, docs/day2.md "Facility events") stands outside that order: it passes only where a route
 * names it, so it reads nothing a viewer reads; an admin passes there too. So does `satellite` (a site's satellite,
 * docs/security.md "Per-site roles"): it passes only the few routes its satellite calls.
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

/** Roles whose tokens must name exactly one site: a satellite acts for its own site only. */
export const singleSiteRoles: readonly Role[] = ['satellite'];

/**
 * Whether a token limited to `sites` (null: every site) may act on or read `siteId`. A target of no site (a batch
 * over several sites, a job without one) is allowed only to a token of every site.
 */
export function siteAllowed(sites: readonly string[] | null, siteId: string | null | undefined): boolean {
  return sites === null || (siteId != null && sites.includes(siteId));
}

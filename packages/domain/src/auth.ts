import { z } from 'zod';

export const roles = ['viewer', 'operator', 'admin'] as const;
export const Role = z.enum(roles);
export type Role = z.infer<typeof Role>;

const rank: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** Roles are ordered: an admin can do what an operator can, an operator what a viewer can. */
export function roleAllows(held: Role, needed: Role): boolean {
  return rank[held] >= rank[needed];
}

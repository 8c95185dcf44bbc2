import { useQuery } from '@tanstack/react-query';
import { ApiError } from '@fleet/client';
import { uncheckedApi } from './client';

export type Role = 'viewer' | 'operator' | 'admin';
const rank: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export interface Caller {
  name: string;
  role: Role;
}

function isCaller(body: unknown): body is Caller {
  if (!body || typeof body !== 'object' || !('role' in body) || !('name' in body)) return false;
  return typeof body.name === 'string' && typeof body.role === 'string' && body.role in rank;
}

/**
 * The signed-in token's name and role from GET /v1/whoami; null when the hub does not say (no such endpoint yet):
 * then every control is shown and the hub's 403 tells the user what their role lacks.
 */
export function useCaller() {
  return useQuery({
    queryKey: ['whoami'],
    queryFn: async (): Promise<Caller | null> => {
      const { data, error, response } = await uncheckedApi().GET('/v1/whoami');
      if (response.status === 404) return null;
      if (!response.ok) throw ApiError.from(response, error);
      return isCaller(data) ? data : null;
    },
    staleTime: Infinity,
  });
}

/** Whether the caller may use a control needing `needed`; unknown roles may try (the hub decides). */
export function useCan(needed: Role): boolean {
  const { data: caller, isPending } = useCaller();
  if (isPending) return false;
  return caller ? rank[caller.role] >= rank[needed] : true;
}

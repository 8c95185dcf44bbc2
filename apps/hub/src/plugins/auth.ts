import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findActiveTokenByHash, hashToken, type Db } from '@fleet/db';
import { describeRoleRequirement, roleAllows, type Role, type RoleRequirement } from '@fleet/domain';
import { ApiError } from '../errors.js';

export interface Actor {
  tokenId: string;
  name: string;
  role: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    actor?: Actor;
  }
  interface FastifyContextConfig {
    /** Least role a route needs (or roles, any of which will do); routes without one are public (health, OpenAPI). */
    role?: RoleRequirement;
  }
}

/**
 * How long a token found active is trusted without asking Postgres again: a revoked token (api_tokens.revoked_at
 * set) is refused by every hub process at most this long after the revocation commits, and a changed role applies
 * within the same bound. Unknown tokens are never cached, so a new token works at once.
 */
export const TOKEN_CACHE_TTL_MS = 5_000;
/** Distinct tokens kept at once; the oldest entry goes first (a token seen again is looked up again). */
const TOKEN_CACHE_MAX = 1_000;

/**
 * Bearer tokens, looked up by their sha256 (only hashes are stored). 401 for a missing
 * or unknown token, 403 when the token's role is below the route's.
 */
export function registerAuth(app: FastifyInstance, db: Db, cacheTtlMs = TOKEN_CACHE_TTL_MS): void {
  // Every API call is authenticated: one indexed query each made the token lookup as dear as a small read itself.
  const cache = new Map<string, { actor: Actor; until: number }>();
  const actorOf = async (secret: string): Promise<Actor | undefined> => {
    const hash = hashToken(secret);
    const now = Date.now();
    const hit = cache.get(hash);
    if (hit && hit.until > now) return hit.actor;
    cache.delete(hash);
    const token = await findActiveTokenByHash(db, hash);
    if (!token) return undefined;
    const actor: Actor = { tokenId: token.id, name: token.name, role: token.role as Role };
    if (cacheTtlMs > 0) {
      if (cache.size >= TOKEN_CACHE_MAX) cache.delete(cache.keys().next().value!);
      cache.set(hash, { actor, until: now + cacheTtlMs });
    }
    return actor;
  };
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const needed = request.routeOptions.config.role;
    if (!needed) return;
    const header = request.headers.authorization;
    const match = header?.match(/^Bearer\s+(\S+)$/i);
    if (!match) {
      throw new ApiError('UNAUTHENTICATED', 'missing bearer token: send "Authorization: Bearer <token>"');
    }
    const actor = await actorOf(match[1]!);
    if (!actor) throw new ApiError('UNAUTHENTICATED', 'the bearer token is unknown or revoked');
    request.actor = actor;
    if (!roleAllows(actor.role, needed)) {
      throw new ApiError(
        'PERMISSION_DENIED',
        `this action needs the ${describeRoleRequirement(needed)} role; token ${actor.name} has ${actor.role}`,
      );
    }
  });
}

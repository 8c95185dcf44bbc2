import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findActiveToken, type Db } from '@fleet/db';
import { roleAllows, type Role } from '@fleet/domain';
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
    /** Least role a route needs; routes without one are public (health, OpenAPI). */
    role?: Role;
  }
}

/**
 * Bearer tokens, looked up by their sha256 (only hashes are stored). 401 for a missing
 * or unknown token, 403 when the token's role is below the route's.
 */
export function registerAuth(app: FastifyInstance, db: Db): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const needed = request.routeOptions.config.role;
    if (!needed) return;
    const header = request.headers.authorization;
    const match = header?.match(/^Bearer\s+(\S+)$/i);
    if (!match) {
      throw new ApiError('UNAUTHENTICATED', 'missing bearer token: send "Authorization: Bearer <token>"');
    }
    const token = await findActiveToken(db, match[1]!);
    if (!token) throw new ApiError('UNAUTHENTICATED', 'the bearer token is unknown or revoked');
    request.actor = { tokenId: token.id, name: token.name, role: token.role as Role };
    if (!roleAllows(request.actor.role, needed)) {
      throw new ApiError(
        'PERMISSION_DENIED',
        `this action needs the ${needed} role; token ${token.name} has ${token.role}`,
      );
    }
  });
}

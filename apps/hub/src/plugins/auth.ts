import { RevocationWatch } from './revocation-watch.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findActiveTokenByHash, hashToken, recordTokensUsed, type Db } from '@fleet/db';
import { describeRoleRequirement, roleAllows, type Role, type RoleRequirement } from '@fleet/domain';
import type { OidcConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { createOidcVerifier, looksLikeJwt } from './oidc.js';

export interface Actor {
  /** The API token's id; null for a person signed in with OIDC (plugins/oidc.ts). */
  tokenId: string | null;
  name: string;
  role: Role;
  /** The sites the token is limited to; null: every site. */
  sites: readonly string[] | null;
  expiresAt: Date | null;
}

/**
 * How a route treats a token limited to some sites (docs/security.md "Per-site roles"). `scoped`: the route keeps to
 * the token's sites itself (lists filtered, targets of other sites refused). `fleet`: it reads or stores nothing of any
 * site (the hardware table, the firmware catalog). A route with neither refuses such tokens: read scoping is the
 * default, so a route that never learnt about sites cannot leak another site's data.
 */
export type SiteScope = 'scoped' | 'fleet';

declare module 'fastify' {
  interface FastifyRequest {
    actor?: Actor;
  }
  interface FastifyContextConfig {
    /** Least role a route needs (or roles, any of which will do); routes without one are public (health, OpenAPI). */
    role?: RoleRequirement;
    /** Whether tokens limited to some sites may call the route; absent: they may not. */
    sites?: SiteScope;
  }
}

/**
 * How long a token found active is trusted without asking Postgres again. A revoked token (api_tokens.revoked_at set)
 * is still refused at once by every hub process: the revocation's NOTIFY (tokenRevokedChannel) evicts it when the
 * transaction commits, and a process that is not listening (its LISTEN connection lost) keeps no cache at all. An
 * expired token is refused at once (the cached entry carries the expiry). Unknown tokens are never cached, so a new
 * token works at once.
 */
export const TOKEN_CACHE_TTL_MS = 5_000;
/** Distinct tokens kept at once; the oldest entry goes first (a token seen again is looked up again). */
const TOKEN_CACHE_MAX = 1_000;
/** last_used_at is written at most this often per token and hub process, so a request never waits for a write. */
export const LAST_USED_RESOLUTION_MS = 60_000;
/** How long recorded uses wait to be written together. */
const LAST_USED_FLUSH_MS = 1_000;

/** The hub process's view of its tokens: the cache the token routes evict from. */
export interface TokenAuth {
  /** Forgets a token at once (it was revoked), so this process refuses it on its next request. */
  evict(tokenId: string): void;
  /** Writes the uses recorded so far (tests; the hub does it on its own within a second). */
  flushUsed(): Promise<void>;
}

/**
 * Bearer tokens, looked up by their sha256 (only hashes are stored), or, with `oidc` configured, a JWT of the OIDC
 * issuer (plugins/oidc.ts). 401 for a missing, unknown, revoked or expired token, 403 when the token's role is below
 * the route's or the route serves no site-scoped token.
 */
export function registerAuth(
  app: FastifyInstance,
  db: Db,
  cacheTtlMs = TOKEN_CACHE_TTL_MS,
  oidc?: OidcConfig,
): TokenAuth {
  const actorOfJwt = oidc && createOidcVerifier(oidc, app.log);
  // Every API call is authenticated: one indexed query each made the token lookup as dear as a small read itself.
  const cache = new Map<string, { actor: Actor; until: number }>();
  const revocations = new RevocationWatch(db, app.log, (tokenId) => {
    if (tokenId) {
      for (const [hash, entry] of cache) if (entry.actor.tokenId === tokenId) cache.delete(hash);
    } else cache.clear();
  });
  app.addHook('onReady', async () => revocations.start());
  app.addHook('onClose', async () => revocations.stop());
  const actorOf = async (secret: string): Promise<Actor | undefined> => {
    const hash = hashToken(secret);
    const now = Date.now();
    const hit = cache.get(hash);
    if (hit && hit.until > now) return hit.actor;
    cache.delete(hash);
    // A revocation that commits while this lookup runs must not be undone by caching what the lookup saw.
    const seen = revocations.generation;
    const token = await findActiveTokenByHash(db, hash);
    if (!token) return undefined;
    const actor: Actor = {
      tokenId: token.id,
      name: token.name,
      role: token.role as Role,
      sites: token.sites,
      expiresAt: token.expiresAt,
    };
    if (cacheTtlMs > 0 && revocations.listening && revocations.generation === seen) {
      if (cache.size >= TOKEN_CACHE_MAX) cache.delete(cache.keys().next().value!);
      cache.set(hash, { actor, until: Math.min(now + cacheTtlMs, actor.expiresAt?.getTime() ?? Infinity) });
    }
    return actor;
  };

  // last_used_at: one write per token a minute at most, several tokens' uses in one statement.
  const written = new Map<string, number>();
  const pending = new Map<string, Date>();
  let flushTimer: NodeJS.Timeout | undefined;
  const flushUsed = async () => {
    clearTimeout(flushTimer);
    flushTimer = undefined;
    const used = [...pending].map(([id, at]) => ({ id, at }));
    pending.clear();
    const stale = Date.now() - LAST_USED_RESOLUTION_MS;
    for (const [id, at] of written) if (at <= stale) written.delete(id);
    try {
      await recordTokensUsed(db, used);
    } catch (err) {
      app.log.warn({ err, tokens: used.length }, 'could not record when tokens were last used');
    }
  };
  const markUsed = (tokenId: string) => {
    const now = Date.now();
    if (now - (written.get(tokenId) ?? -Infinity) < LAST_USED_RESOLUTION_MS) return;
    written.set(tokenId, now);
    pending.set(tokenId, new Date(now));
    flushTimer ??= setTimeout(() => void flushUsed(), LAST_USED_FLUSH_MS).unref();
  };
  app.addHook('onClose', flushUsed);

  app.addHook('onRequest', async (request: FastifyRequest) => {
    const { role: needed, sites: scope } = request.routeOptions.config;
    if (!needed) return;
    const header = request.headers.authorization;
    const match = header?.match(/^Bearer\s+(\S+)$/i);
    if (!match) {
      throw new ApiError('UNAUTHENTICATED', 'missing bearer token: send "Authorization: Bearer <token>"');
    }
    const bearer = match[1]!;
    const actor = actorOfJwt && looksLikeJwt(bearer) ? await actorOfJwt(bearer) : await actorOf(bearer);
    if (!actor) throw new ApiError('UNAUTHENTICATED', 'the bearer token is unknown or revoked, or has expired');
    request.actor = actor;
    if (actor.tokenId) markUsed(actor.tokenId);
    const who = `${actor.tokenId ? 'token' : 'user'} ${actor.name}`;
    if (!roleAllows(actor.role, needed)) {
      throw new ApiError(
        'PERMISSION_DENIED',
        `this action needs the ${describeRoleRequirement(needed)} role; ${who} has ${actor.role}`,
      );
    }
    if (actor.sites && !scope) {
      throw new ApiError(
        'PERMISSION_DENIED',
        `${who} is limited to site ${actor.sites.join(', ')}; ${request.method} ` +
          `${request.routeOptions.url} reads or changes data of every site and needs a token of every site`,
      );
    }
  });

  return {
    evict: (tokenId) => revocations.revoked(tokenId),
    flushUsed,
  };
}

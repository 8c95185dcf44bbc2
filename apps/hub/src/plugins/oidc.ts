import type { FastifyBaseLogger } from 'fastify';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Role } from '@fleet/domain';
import type { OidcConfig } from '../config.js';
import { ApiError } from '../errors.js';
import type { Actor } from './auth.js';

/** Three base64url parts: a JWS compact serialization. Fleet's own tokens (`fleet_...`) have no dots. */
const jwtShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
export const looksLikeJwt = (bearer: string): boolean => jwtShape.test(bearer);

/** A person's name is the actor requests are audited under: printable, no spaces (as a token's name). */
const printableName = /^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,199}$/;

/** After a failed discovery, JWTs are answered 503 for this long before the issuer is asked again. */
const DISCOVERY_RETRY_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;

/** Public-key signatures only: the key set is public, so an HMAC (`HS256`) over it would prove nothing. */
const signingAlgorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

const rank: Record<string, number> = { viewer: 0, operator: 1, admin: 2 };

/**
 * The role and sites a person's groups give (docs/security.md "OIDC sign-in"): the highest role any mapped group
 * grants, over the sites of the groups granting that role (every site if one of them is unscoped). Groups granting a
 * lower role add no sites: an unscoped viewer group beside a dc-a operator group is an operator of dc-a only.
 */
export function roleOfGroups(
  mapping: OidcConfig['roleMapping'],
  groups: readonly string[],
): { role: Role; sites: readonly string[] | null } | undefined {
  const granted = groups.flatMap((g) => (Object.hasOwn(mapping, g) ? [mapping[g]!] : []));
  if (!granted.length) return undefined;
  const top = Math.max(...granted.map((g) => rank[g.role]!));
  const grants = granted.filter((g) => rank[g.role] === top);
  const sites = grants.some((g) => !g.sites) ? null : [...new Set(grants.flatMap((g) => g.sites!))].sort();
  return { role: grants[0]!.role, sites };
}

/**
 * Verifies OIDC access tokens (JWTs) against the issuer's keys. The issuer is discovered at the first JWT, not at
 * start, so the hub starts while the issuer is down; until it answers, JWTs get 503 (API tokens still work).
 */
export function createOidcVerifier(config: OidcConfig, log: FastifyBaseLogger) {
  let keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  let failedAt = -Infinity;

  const discover = async (): Promise<URL> => {
    if (config.jwksUri) return new URL(config.jwksUri);
    const url = `${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const res = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was fetched for.
    if (doc.issuer !== config.issuer) throw new Error(`${url} names issuer ${String(doc.issuer)}`);
    if (typeof doc.jwks_uri !== 'string') throw new Error(`${url} has no jwks_uri`);
    return new URL(doc.jwks_uri);
  };

  const keySet = () => {
    if (!keys && Date.now() - failedAt >= DISCOVERY_RETRY_MS) {
      keys = discover().then(
        (jwksUri) => {
          log.info({ issuer: config.issuer, jwksUri: jwksUri.href }, 'OIDC issuer discovered');
          // jose keeps the keys, and fetches them again for a key id it does not know (a rotated signing key),
          // at most once per cooldown.
          return createRemoteJWKSet(jwksUri, {
            timeoutDuration: FETCH_TIMEOUT_MS,
            cooldownDuration: config.jwksCooldownS * 1000,
          });
        },
        (err: unknown) => {
          failedAt = Date.now();
          keys = undefined;
          log.warn({ issuer: config.issuer, err: String(err) }, 'OIDC discovery failed');
          throw err;
        },
      );
    }
    return keys ?? Promise.reject(new Error('OIDC discovery failed moments ago'));
  };

  const unavailable = () =>
    new ApiError('UNAVAILABLE', `the OIDC issuer ${config.issuer} cannot be reached to verify the token; try again`);

  return async function actorOfJwt(jwt: string): Promise<Actor> {
    let jwks: ReturnType<typeof createRemoteJWKSet>;
    try {
      jwks = await keySet();
    } catch {
      throw unavailable();
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(jwt, jwks, {
        issuer: config.issuer,
        audience: config.audience,
        clockTolerance: config.clockToleranceS,
        requiredClaims: ['exp', 'sub'],
        algorithms: signingAlgorithms,
      }));
    } catch (err) {
      throw refusal(err) ?? unavailable();
    }
    const nameClaim = payload[config.nameClaim];
    const name = typeof nameClaim === 'string' && nameClaim ? nameClaim : payload.sub!;
    if (!printableName.test(name))
      throw new ApiError('UNAUTHENTICATED', `the token's ${config.nameClaim} or sub is not a printable name`);
    const rawGroups = payload[config.groupsClaim];
    const groups = Array.isArray(rawGroups) ? rawGroups.filter((g): g is string => typeof g === 'string') : [];
    const grant = roleOfGroups(config.roleMapping, groups);
    if (!grant)
      throw new ApiError(
        'PERMISSION_DENIED',
        `${name} is in no group the hub maps to a role (groups: ${groups.length ? groups.join(', ') : 'none'}; ` +
          `claim ${config.groupsClaim})`,
      );
    return {
      tokenId: null,
      name,
      role: grant.role,
      sites: grant.sites,
      expiresAt: payload.exp === undefined ? null : new Date(payload.exp * 1000),
    };
  };
}

/** The 401 for a token that is not good; undefined when the keys could not be fetched (503). */
function refusal(err: unknown): ApiError | undefined {
  const deny = (why: string) => new ApiError('UNAUTHENTICATED', `the OIDC token ${why}`);
  if (err instanceof errors.JWTExpired) return deny('has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return deny('is for another audience');
    if (err.claim === 'iss') return deny('is from another issuer');
    if (err.claim === 'nbf') return deny('is not valid yet');
    return deny(`has a bad ${err.claim} claim`);
  }
  if (err instanceof errors.JWKSNoMatchingKey) return deny("is signed by a key the issuer's key set does not hold");
  if (err instanceof errors.JWSSignatureVerificationFailed) return deny('has a signature that does not verify');
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return undefined;
  if (err instanceof errors.JOSEError) return deny(`is malformed or unsupported (${err.code})`);
  return undefined;
}

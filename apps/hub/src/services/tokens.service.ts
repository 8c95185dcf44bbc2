import { z } from 'zod';
import {
  createApiToken,
  getApiToken,
  isUniqueViolation,
  listSites,
  revokeApiToken,
  uniqueIndexes,
  type ApiToken,
  type Db,
} from '@fleet/db';
import { singleSiteRoles, type Role } from '@fleet/domain';
import { ApiError, invalid, notFound } from '../errors.js';
import { auditAccepted, type Caller } from './caller.js';

/** A token's name: also the actor its requests are audited under, so printable and without spaces. */
export const TokenName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@:-]*$/, 'must be letters, digits and . _ @ : - (starting with a letter or digit)');

export interface TokenRequest {
  name: string;
  role: Role;
  /** Absent: every site. */
  sites?: string[] | undefined;
  expiresAt?: Date | undefined;
}

/** How a refusal names each input: body fields for the API, flags for admin-cli. */
export type TokenFields = Record<'name' | 'sites' | 'expires', string>;

/**
 * Makes a token (its hash stored, the secret answered once) with its audit row in one transaction. Sites must exist, a
 * satellite token names exactly one, an expiry lies ahead, and a name is taken once (409).
 */
export async function issueToken(
  db: Db,
  caller: Caller,
  req: TokenRequest,
  fields: TokenFields,
): Promise<{ token: string; row: ApiToken }> {
  const sites = req.sites && [...new Set(req.sites)];
  if (sites) {
    if (!sites.length) throw invalid(fields.sites, 'name at least one site, or leave it out for every site');
    const known = new Set((await listSites(db)).map((s) => s.id));
    const unknown = sites.filter((s) => !known.has(s));
    if (unknown.length) throw invalid(fields.sites, `no site ${unknown.join(', ')}`);
  }
  // A building management system's routes serve every site: limited to some, its token could do nothing.
  if (req.role === 'facility' && sites) throw invalid(fields.sites, 'a facility token serves every site: leave it out');
  if (singleSiteRoles.includes(req.role) && sites?.length !== 1)
    throw invalid(fields.sites, `a ${req.role} token acts for exactly one site: name it`);
  if (req.expiresAt && req.expiresAt.getTime() <= Date.now())
    throw invalid(fields.expires, `${req.expiresAt.toISOString()} has passed; an expiry must lie ahead`);
  try {
    return await db.transaction(async (tx) => {
      const made = await createApiToken(tx, req.name, req.role, {
        sites: sites ?? null,
        expiresAt: req.expiresAt ?? null,
        createdBy: caller.actor.name,
      });
      await auditAccepted(tx, caller, 201, {
        action: 'token.create',
        target: `token/${made.row.id}`,
        details: {
          name: req.name,
          role: req.role,
          sites: sites ?? null,
          expires_at: req.expiresAt?.toISOString() ?? null,
        },
      });
      return made;
    });
  } catch (err) {
    if (isUniqueViolation(err, uniqueIndexes.tokenName))
      throw new ApiError('ALREADY_EXISTS', `a token named ${req.name} exists already (revoked ones keep their name)`, [
        { field: fields.name, issue: 'taken' },
      ]);
    throw err;
  }
}

/**
 * Revokes a token with its audit row; 409 when it is revoked already. The caller evicts it from its process's cache
 * once this commits (other hub processes refuse it within their cache's TTL).
 */
export async function revokeToken(db: Db, caller: Caller, id: string, reason: string): Promise<ApiToken> {
  const token = await getApiToken(db, id);
  if (!token) throw notFound('token', id);
  const revoked = await db.transaction(async (tx) => {
    const row = await revokeApiToken(tx, id, caller.actor.name, reason);
    if (!row) return undefined;
    await auditAccepted(tx, caller, 200, {
      action: 'token.revoke',
      target: `token/${id}`,
      details: { name: row.name, role: row.role, reason },
    });
    return row;
  });
  if (!revoked) {
    const now = await getApiToken(db, id);
    throw new ApiError(
      'FAILED_PRECONDITION',
      `token ${token.name} was revoked already${now?.revokedBy ? ` by ${now.revokedBy}` : ''}`,
    );
  }
  return revoked;
}

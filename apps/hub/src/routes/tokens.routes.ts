import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getApiToken, listApiTokens, type ApiToken, type Db } from '@fleet/db';
import { Role } from '@fleet/domain';
import { notFound } from '../errors.js';
import { cursorPage, decodeCursor, limitSchema, repeated } from '../pagination.js';
import { IdParam, uuid } from '../params.js';
import type { TokenAuth } from '../plugins/auth.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { callerOf } from '../services/caller.js';
import { issueToken, revokeToken, TokenName } from '../services/tokens.service.js';
import { siteId } from '../validation.js';
import { timestamp } from '../views.js';

/** Ten years: a longer life is no expiry at all, leave it out. */
const MAX_TTL_S = 10 * 365 * 86_400;

const NewToken = z
  .object({
    name: TokenName,
    role: Role,
    sites: z.array(siteId).max(1000).optional().describe('Site ids the token is limited to; absent: every site'),
    expires_at: z.iso.datetime({ offset: true }).optional().describe('When the token stops working (RFC 3339)'),
    ttl_s: z.number().int().min(1).max(MAX_TTL_S).optional().describe('Or: seconds from now until it stops'),
  })
  .strict()
  .refine((b) => b.expires_at === undefined || b.ttl_s === undefined, {
    message: 'give expires_at or ttl_s, not both',
    path: ['ttl_s'],
  });

export const TokenView = z
  .object({
    id: uuid,
    name: z.string(),
    role: Role,
    sites: z.array(z.string()).nullable().describe('The sites the token is limited to; null: every site'),
    state: z.enum(['active', 'expired', 'revoked']),
    created_at: timestamp,
    created_by: z.string().nullable(),
    expires_at: timestamp.nullable(),
    last_used_at: timestamp.nullable().describe('To within a minute'),
    revoked_at: timestamp.nullable(),
    revoked_by: z.string().nullable(),
    revoke_reason: z.string().nullable(),
  })
  .meta({ id: 'Token' });

const CreatedToken = TokenView.extend({
  token: z.string().describe('The secret: shown this once, only its hash is kept'),
}).meta({ id: 'CreatedToken' });

const TokenPage = z.object({ items: z.array(TokenView), next_cursor: z.string().nullable() }).meta({ id: 'TokenPage' });

const iso = (d: Date | null) => d?.toISOString() ?? null;

function tokenView(t: ApiToken): z.infer<typeof TokenView> {
  return {
    id: t.id,
    name: t.name,
    role: t.role as Role,
    sites: t.sites,
    state: t.revokedAt ? 'revoked' : t.expiresAt && t.expiresAt.getTime() <= Date.now() ? 'expired' : 'active',
    created_at: t.createdAt.toISOString(),
    created_by: t.createdBy,
    expires_at: iso(t.expiresAt),
    last_used_at: iso(t.lastUsedAt),
    revoked_at: iso(t.revokedAt),
    revoked_by: t.revokedBy,
    revoke_reason: t.revokeReason,
  };
}

/** API tokens (docs/security.md "Tokens"): admins make, list and revoke them; the secret is answered once. */
export function tokenRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, auth: TokenAuth): void {
  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/tokens',
      tag: 'security',
      summary:
        'Make an API token: a role, optionally limited to sites (a satellite token to exactly one) and an expiry. ' +
        'The secret is in this answer only. Idempotency-Key is not honoured (a kept answer would keep the secret); ' +
        'a name is taken once (409), so a retry cannot make two',
      role: 'admin',
      body: NewToken,
      success: { status: 201, description: 'The token and its secret', body: CreatedToken, headers: ['Location'] },
      errors: [400, 409],
    },
    async ({ request, reply, body }) => {
      const expiresAt =
        body.expires_at !== undefined
          ? new Date(body.expires_at)
          : body.ttl_s !== undefined
            ? new Date(Date.now() + body.ttl_s * 1000)
            : undefined;
      const { token, row } = await issueToken(
        db,
        callerOf(request),
        { name: body.name, role: body.role, sites: body.sites, expiresAt },
        {
          name: 'body.name',
          sites: 'body.sites',
          expires: body.ttl_s !== undefined ? 'body.ttl_s' : 'body.expires_at',
        },
      );
      return reply
        .status(201)
        .header('location', `/v1/tokens/${row.id}`)
        .send({ ...tokenView(row), token });
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/tokens',
      tag: 'security',
      summary: 'List API tokens, newest first (never their secrets or hashes), revoked and expired ones included',
      role: 'admin',
      query: z.object({ limit: limitSchema, cursor: z.string().optional(), role: repeated(Role) }).strict(),
      success: { status: 200, description: 'Tokens, newest first', body: TokenPage },
      errors: [400],
    },
    async ({ query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.iso.datetime(), uuid]));
      const rows = await listApiTokens(db, {
        limit: q.limit + 1,
        after: after && { createdAt: new Date(after[0]), id: after[1] },
        role: q.role,
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.createdAt.toISOString(), last.id]);
      return { items: page.map(tokenView), next_cursor: nextCursor };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/tokens/:id',
      tag: 'security',
      summary: 'One API token (never its secret or hash)',
      role: 'admin',
      params: IdParam,
      success: { status: 200, description: 'The token', body: TokenView },
      errors: [400, 404],
    },
    async ({ params }) => {
      const token = await getApiToken(db, params.id);
      if (!token) throw notFound('token', params.id);
      return tokenView(token);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/tokens/:id/revoke',
      tag: 'security',
      summary:
        'Revoke a token: refused from its next request on this hub process, on others within 5 s (their token ' +
        'cache). 409 when it is revoked already',
      role: 'admin',
      params: IdParam,
      body: z.object({ reason: z.string().trim().min(1).max(500) }).strict(),
      success: { status: 200, description: 'The token, revoked', body: TokenView },
      errors: [400, 404, 409],
    },
    async ({ request, params, body }) => {
      const token = await revokeToken(db, callerOf(request), params.id, body.reason);
      auth.evict(token.id);
      return tokenView(token);
    },
  );
}

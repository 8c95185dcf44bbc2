import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { Role } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { translatingViolations } from '../errors.js';
import { apiTokens, idempotencyKeys, type ApiToken } from '../schema/index.js';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface NewApiToken {
  /** Site ids the token is limited to; null or absent: every site. */
  sites?: string[] | null;
  expiresAt?: Date | null;
  createdBy?: string | null;
}

/** Creates a token and returns it once; only its hash is stored. */
export async function createApiToken(
  db: DbOrTx,
  name: string,
  role: Role,
  opts: NewApiToken = {},
): Promise<{ token: string; row: ApiToken }> {
  const token = `fleet_${randomBytes(24).toString('base64url')}`;
  const [row] = await translatingViolations(
    db
      .insert(apiTokens)
      .values({
        name,
        role,
        tokenHash: hashToken(token),
        sites: opts.sites ?? null,
        expiresAt: opts.expiresAt ?? null,
        createdBy: opts.createdBy ?? null,
      })
      .returning(),
  );
  return { token, row: row! };
}

export async function findActiveToken(db: DbOrTx, token: string): Promise<ApiToken | undefined> {
  return findActiveTokenByHash(db, hashToken(token));
}

/**
 * As findActiveToken, for a caller that already holds the token's hash (the hub's token cache is keyed by it). Active:
 * neither revoked nor expired.
 */
export async function findActiveTokenByHash(db: DbOrTx, tokenHash: string): Promise<ApiToken | undefined> {
  return db.query.apiTokens.findFirst({
    where: and(
      eq(apiTokens.tokenHash, tokenHash),
      isNull(apiTokens.revokedAt),
      or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, sql`now()`)),
    ),
  });
}

export async function getApiToken(db: DbOrTx, id: string): Promise<ApiToken | undefined> {
  return db.query.apiTokens.findFirst({ where: eq(apiTokens.id, id) });
}

/** A page of tokens, newest first by created_at then id; `after` is the last row of the previous page. */
export async function listApiTokens(
  db: DbOrTx,
  opts: { limit: number; after?: { createdAt: Date; id: string } | undefined; role?: string[] | undefined },
): Promise<ApiToken[]> {
  const { after } = opts;
  return db
    .select()
    .from(apiTokens)
    .where(
      and(
        after ? sql`(${apiTokens.createdAt}, ${apiTokens.id}) < (${after.createdAt}, ${after.id})` : undefined,
        opts.role?.length ? inArray(apiTokens.role, opts.role) : undefined,
      ),
    )
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id))
    .limit(opts.limit);
}

/** Revokes a token not revoked yet; undefined when it already was (or does not exist). */
/** The NOTIFY channel a revocation is announced on; the payload is the token's id. */
export const tokenRevokedChannel = 'fleet_token_revoked';

export async function revokeApiToken(
  db: DbOrTx,
  id: string,
  by: string,
  reason: string,
): Promise<ApiToken | undefined> {
  const [row] = await db
    .update(apiTokens)
    .set({ revokedAt: sql`now()`, revokedBy: by, revokeReason: reason })
    .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
    .returning();
  // Delivered at commit to every hub process, which forgets the token at once (plugins/auth.ts).
  if (row) await db.execute(sql`select pg_notify(${tokenRevokedChannel}, ${id})`);
  return row;
}

/** Records when tokens were last used, in one statement; a later time already stored is kept. */
export async function recordTokensUsed(db: DbOrTx, used: { id: string; at: Date }[]): Promise<void> {
  if (!used.length) return;
  const ids = sql.param(used.map((u) => u.id));
  const ats = sql.param(used.map((u) => u.at.toISOString()));
  await db.execute(sql`
    update api_tokens t set last_used_at = u.at
    from unnest(${ids}::uuid[], ${ats}::timestamptz[]) as u(id, at)
    where t.id = u.id and (t.last_used_at is null or t.last_used_at < u.at)`);
}

/** How long an Idempotency-Key answer is kept for replay. */
export const IDEMPOTENCY_KEY_TTL_HOURS = 24;

export interface IdempotentAnswer {
  action: string;
  requestFingerprint: string;
  statusCode: number;
  headers: Record<string, string>;
  response: unknown;
}

const fresh = sql`now() - make_interval(hours => ${IDEMPOTENCY_KEY_TTL_HOURS})`;

/** The answer an earlier request with this actor and key got, unless the key has expired. */
export async function findIdempotentAnswer(
  db: DbOrTx,
  actor: string,
  key: string,
): Promise<IdempotentAnswer | undefined> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.actor, actor), eq(idempotencyKeys.key, key), gt(idempotencyKeys.createdAt, fresh)));
  return row;
}

/** Serialises the requests of one actor and key until the transaction ends. */
export async function lockIdempotencyKey(tx: DbOrTx, actor: string, key: string): Promise<void> {
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtextextended(${JSON.stringify(['idempotency', actor, key])}, 0))`,
  );
}

/**
 * Keeps the answer under the key, in the transaction that made it (under lockIdempotencyKey); an expired key is taken
 * over.
 */
export async function storeIdempotentAnswer(
  db: DbOrTx,
  actor: string,
  key: string,
  answer: IdempotentAnswer,
): Promise<void> {
  const row = { actor, key, ...answer, createdAt: new Date() };
  await db
    .insert(idempotencyKeys)
    .values(row)
    .onConflictDoUpdate({
      target: [idempotencyKeys.actor, idempotencyKeys.key],
      set: row,
      setWhere: lte(idempotencyKeys.createdAt, fresh),
    });
}

/** Jobs that bring their devices to the default manifest of their node type (the firmware baseline). */
const baselineKinds = sql.raw(`('rack.enrol', 'device.enrol', 'device.burn_in')`);

/**
 * Whether an open job (queued, running or cancelling) of `siteId` pushes the package stored under `digest`: by its
 * package_id (an NVOS install), through a manifest_id whose steps name the package (a firmware update, a campaign's
 * device updates), or an enrolment's baseline: the default manifest of a node type among its devices (its device's,
 * else its rack's). What a satellite token may fetch (docs/security.md "The satellite role").
 */
export async function siteJobUsesBlob(db: DbOrTx, siteId: string, digest: string): Promise<boolean> {
  const res = await db.execute<{ used: boolean }>(sql`
    select exists (
      select 1
      from firmware_packages p
      join jobs j on j.site_id = ${siteId} and j.state in ('queued', 'running', 'cancelling')
      where p.digest = ${digest}
        and (
          j.params->>'package_id' = p.id::text
          or exists (
            select 1 from firmware_manifests m, jsonb_array_elements(m.steps) s
            where m.id::text = j.params->>'manifest_id' and s->>'packageId' = p.id::text
          )
          or (
            (
              j.kind in ${baselineKinds}
              -- A remediation whose playbook reflashes the device writes its default manifest again.
              or (j.kind = 'device.remediate' and j.params->'playbook'->'steps' @> '["firmware_reflash"]'::jsonb)
            )
            and exists (
              select 1 from firmware_manifests m, jsonb_array_elements(m.steps) s, devices d
              where m.is_default and s->>'packageId' = p.id::text and d.node_type = m.hardware_type
                and (d.id = j.device_id or (j.device_id is null and d.rack_id = j.rack_id))
            )
          )
        )
    ) as used`);
  return res.rows[0]?.used === true;
}

/** What a path's `:id` can name, for the site check of a site-scoped token. */
export type SiteTarget = 'device' | 'rack' | 'job' | 'rma';

const siteOfTargetSql = {
  device: (id: string) => sql`select site_id from devices where id = ${id}`,
  rack: (id: string) => sql`select site_id from racks where id = ${id}`,
  job: (id: string) => sql`select site_id from jobs where id = ${id}`,
  rma: (id: string) => sql`select site_id from rma_cases where id = ${id}`,
} satisfies Record<SiteTarget, (id: string) => unknown>;

/**
 * The site of a device, rack, job or RMA case: `{ siteId }` (null for a job of no single site, a batch over several),
 * or undefined when there is no such row.
 */
export async function siteOfTarget(
  db: DbOrTx,
  kind: SiteTarget,
  id: string,
): Promise<{ siteId: string | null } | undefined> {
  const res = await db.execute<{ site_id: string | null }>(siteOfTargetSql[kind](id));
  const row = res.rows[0];
  return row && { siteId: row.site_id };
}

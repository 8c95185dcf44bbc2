import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, isNull, lte, sql } from 'drizzle-orm';
import type { Role } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { apiTokens, idempotencyKeys, type ApiToken } from '../schema/index.js';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Creates a token and returns it once; only its hash is stored. */
export async function createApiToken(db: DbOrTx, name: string, role: Role): Promise<{ token: string; row: ApiToken }> {
  const token = `fleet_${randomBytes(24).toString('base64url')}`;
  const [row] = await db
    .insert(apiTokens)
    .values({ name, role, tokenHash: hashToken(token) })
    .returning();
  return { token, row: row! };
}

export async function findActiveToken(db: DbOrTx, token: string): Promise<ApiToken | undefined> {
  return findActiveTokenByHash(db, hashToken(token));
}

/** As findActiveToken, for a caller that already holds the token's hash (the hub's token cache is keyed by it). */
export async function findActiveTokenByHash(db: DbOrTx, tokenHash: string): Promise<ApiToken | undefined> {
  return db.query.apiTokens.findFirst({
    where: and(eq(apiTokens.tokenHash, tokenHash), isNull(apiTokens.revokedAt)),
  });
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

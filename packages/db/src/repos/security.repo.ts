import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Role } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { apiTokens, auditLog, type ApiToken, type AuditEntry } from '../schema/index.js';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Creates a token and returns it once; only its hash is stored. */
export async function createApiToken(db: DbOrTx, name: string, role: Role): Promise<{ token: string; row: ApiToken }> {
  const token = `fleet_${randomBytes(24).toString('base64url')}`;
  const [row] = await db.insert(apiTokens).values({ name, role, tokenHash: hashToken(token) }).returning();
  return { token, row: row! };
}

export async function findActiveToken(db: DbOrTx, token: string): Promise<ApiToken | undefined> {
  return db.query.apiTokens.findFirst({
    where: and(eq(apiTokens.tokenHash, hashToken(token)), isNull(apiTokens.revokedAt)),
  });
}

export async function insertAudit(db: DbOrTx, entry: AuditEntry): Promise<void> {
  await db.insert(auditLog).values(entry);
}

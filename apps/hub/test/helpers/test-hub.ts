import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { connectDb, createApiToken, type DbHandle } from '@fleet/db';
import { cloneTestDatabase } from '@fleet/db/testing';
import { buildHub, type HubDeps } from '../../src/app.js';
import { twoPersonRules, type TwoPersonRule } from '../../src/config.js';
import { FileBlobStore } from '../../src/firmware/blob-store.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

export const noTwoPersonRules: NonNullable<HubDeps['twoPerson']> = {
  rules: Object.fromEntries(twoPersonRules.map((r) => [r, false])) as Record<TwoPersonRule, boolean>,
  approvalTtlS: 86_400,
};

export interface TestHub {
  handle: DbHandle;
  app: FastifyInstance;
  /** A token per role, named t-<role>. */
  tokens: { admin: string; operator: string; viewer: string };
  /** The firmware blob store and its temp folder, when the hub serves firmware. */
  blobs: FileBlobStore | undefined;
  blobDir: string | undefined;
  close(): Promise<void>;
}

/**
 * A hub on its own clone of the migrated test database, with no Temporal anywhere: what it
 * answers comes from the projection alone. `maxPackageBytes` gives it a firmware catalog whose
 * blobs live in a temp folder.
 */
export async function startTestHub(
  opts: {
    maxPackageBytes?: number;
    log?: Logger;
    /** Two-person rules; all off unless given (the tests of other features act as one person). */
    twoPerson?: HubDeps['twoPerson'];
  } & Partial<
    Pick<HubDeps, 'campaigns' | 'web' | 'rateLimit' | 'oidc' | 'temporalCodec' | 'temporalCodecOrigins'>
  > = {},
): Promise<TestHub> {
  const { maxPackageBytes, log, twoPerson, ...deps } = opts;
  const database = await cloneTestDatabase(baseUrl, template);
  const handle = connectDb(database.url, 4);
  const blobDir = maxPackageBytes === undefined ? undefined : await mkdtemp(join(tmpdir(), 'fleet-blobs-'));
  const blobs = blobDir ? new FileBlobStore(blobDir) : undefined;
  const app = buildHub({
    db: handle.db,
    log: log ?? pino({ level: 'silent' }),
    registry: new Registry(),
    views: { temporalNamespace: 'default' },
    ...deps,
    ...(blobs ? { firmware: { blobs, maxPackageBytes: maxPackageBytes! } } : {}),
    twoPerson: twoPerson ?? noTwoPersonRules,
  });
  const tokens = { admin: '', operator: '', viewer: '' };
  for (const role of ['admin', 'operator', 'viewer'] as const)
    tokens[role] = (await createApiToken(handle.db, `t-${role}`, role)).token;
  return {
    handle,
    app,
    tokens,
    blobs,
    blobDir,
    close: async () => {
      await app.close();
      await handle.close();
      await database.drop();
      if (blobDir) await rm(blobDir, { recursive: true, force: true });
    },
  };
}

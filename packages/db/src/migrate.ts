import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { connectDb } from './client.js';

export const migrationsFolder = fileURLToPath(new URL('../../../migrations', import.meta.url));

/** Applies the committed SQL migrations; the only way schema reaches Postgres. */
export async function migrateDatabase(url: string): Promise<void> {
  const handle = connectDb(url, 1);
  try {
    await migrate(handle.db, { migrationsFolder });
  } finally {
    await handle.close();
  }
}

import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { connectDb } from './client.js';

export const migrationsFolder = fileURLToPath(new URL('../../../migrations', import.meta.url));

/**
 * Applies the committed SQL migrations; the only way schema reaches Postgres. Processes that start together (each hub
 * pod's init container) take turns on an advisory lock, held by a connection of its own, as drizzle's migrator is not
 * safe to run concurrently; the later ones find nothing left to apply.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  try {
    await lock.query("select pg_advisory_lock(hashtextextended('fleet_migrations', 0))");
    const handle = connectDb(url, 1);
    try {
      await migrate(handle.db, { migrationsFolder });
    } finally {
      await handle.close();
    }
  } finally {
    await lock.end(); // the session's end releases the lock
  }
}

import { dirname } from 'node:path';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { repositoryPath } from '@fleet/config';
import { connectDb } from './client.js';

/** The repository's migrations/ (drizzle reads its journal), from these sources or from the hub's bundle. */
function migrationsFolder(): string {
  const journal = repositoryPath(import.meta.url, 'migrations/meta/_journal.json');
  if (!journal) throw new Error(`no migrations/meta/_journal.json in a folder above ${import.meta.url}`);
  return dirname(dirname(journal));
}

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
      await migrate(handle.db, { migrationsFolder: migrationsFolder() });
    } finally {
      await handle.close();
    }
  } finally {
    await lock.end(); // the session's end releases the lock
  }
}

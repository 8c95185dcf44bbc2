import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from './schema/index.js';

/** The database, over its pool (`$client`: the event listener opens a connection with the same settings). */
export type Db = NodePgDatabase<typeof schema> & { $client: pg.Pool };
/** A transaction handle; repositories accept either. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

export interface DbHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

export function connectDb(url: string, poolSize = 10, onError?: (err: Error) => void): DbHandle {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
  // An idle client losing its server (Postgres restarted) must not crash the process.
  pool.on('error', (err) => onError?.(err));
  const db = drizzle(pool, { schema });
  return { db, pool, close: () => pool.end() };
}

/** Postgres NOTIFY channel the hub signals when it writes an intent. */
export const intentChannel = 'fleet_intents';

/**
 * Runs several reads that together make one answer (a device with its issues, a rack with its devices) in one
 * read-only REPEATABLE READ transaction, so they all see the same committed state: read on their own, a commit
 * landing between them (a sync clearing a BMC URL and raising the issue that explains it) shows half of itself.
 * The reads share the transaction's one connection: await them one by one (pg deprecates queueing on a client).
 */
export function readSnapshot<T>(db: Db, read: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(read, { isolationLevel: 'repeatable read', accessMode: 'read only' });
}

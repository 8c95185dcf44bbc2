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

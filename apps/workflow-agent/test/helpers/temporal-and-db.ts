import { Client, Connection } from '@temporalio/client';
import { connectDb, type DbHandle } from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { startTemporalDevServer, type DevServer } from '@fleet/temporal';
import type { TemporalClients } from '../../src/temporal-clients.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

/** One client for every site: these tests encrypt nothing. */
export const oneClient = (client: Client): TemporalClients => ({ forSite: () => client, any: client });

/** What the agent's tests run against: a real Temporal dev server (no worker polls it) and a fresh database. */
export interface AgentTestEnv {
  temporal: DevServer;
  database: TestDatabase;
  handle: DbHandle;
  client: Client;
  close(): Promise<void>;
}

export async function startAgentTestEnv(): Promise<AgentTestEnv> {
  const temporal = await startTemporalDevServer();
  const database = await cloneTestDatabase(baseUrl, template);
  const handle = connectDb(database.url, 4);
  const connection = await Connection.connect({ address: temporal.address });
  return {
    temporal,
    database,
    handle,
    client: new Client({ connection }),
    async close() {
      await connection.close();
      await handle.close();
      await database.drop();
      await temporal.stop();
    },
  };
}

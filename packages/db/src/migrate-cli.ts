import { z } from 'zod';
import { configPathFromArgs, DatabaseConfig, loadConfig } from '@fleet/config';
import { migrateDatabase } from './migrate.js';

// Reads the `database` section of any process's config file (hub or workflow agent).
const schema = z.object({ database: DatabaseConfig }).passthrough();
const config = loadConfig(schema, configPathFromArgs());
await migrateDatabase(config.database.url);
console.log(JSON.stringify({ msg: 'migrations applied', database: new URL(config.database.url).pathname.slice(1) }));

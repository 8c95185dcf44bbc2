import { parseArgs } from 'node:util';
import { ConfigError, configPathFromArgs, loadConfig } from '@fleet/config';
import { connectDb, createApiToken } from '@fleet/db';
import { Role } from '@fleet/domain';
import { HubConfig } from './config.js';

// Bootstraps API tokens (the first admin cannot be made through the API).
const usage =
  `usage: admin-cli create-token --name <name> --role ${Role.options.join('|')} --config <hub.json>

Creates an API token and prints it once as JSON ({"name","role","token"}); Postgres keeps only its hash.
viewer < operator < admin are people's roles; facility is a building management system's: it may only post
facility events and read its own (docs/day2.md, "Facility events"), and its name is the events' source.
The config is the hub's (its database.url is used). Example:
  node --import tsx apps/hub/src/admin-cli.ts create-token --name ops --role operator ` +
  `--config deploy/config/hub.example.json`;

function parse() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        role: { type: 'string' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${usage}`);
    process.exit(2);
  }
}
const { values, positionals } = parse();
if (values.help) {
  console.log(usage);
  process.exit(0);
}
if (positionals[0] !== 'create-token' || !values.name) {
  console.error(usage);
  process.exit(2);
}
const role = Role.safeParse(values.role);
if (!role.success) {
  console.error(`--role must be one of ${Role.options.join(', ')}`);
  process.exit(2);
}
const config = (() => {
  try {
    return loadConfig(HubConfig, configPathFromArgs());
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`${err.message}\n\n${usage}`);
    process.exit(2);
  }
})();
const handle = connectDb(config.database.url, 1);
try {
  const { token, row } = await createApiToken(handle.db, values.name, role.data);
  console.log(JSON.stringify({ name: row.name, role: row.role, token }));
} finally {
  await handle.close();
}

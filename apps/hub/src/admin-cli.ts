import { parseArgs } from 'node:util';
import { configPathFromArgs, loadConfig } from '@fleet/config';
import { connectDb, createApiToken } from '@fleet/db';
import { Role } from '@fleet/domain';
import { HubConfig } from './config.js';

// Bootstraps API tokens (the first admin cannot be made through the API).
// Usage: fleet-admin create-token --name ops --role operator --config hub.json
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { name: { type: 'string' }, role: { type: 'string' }, config: { type: 'string' } },
});
if (positionals[0] !== 'create-token' || !values.name) {
  console.error('usage: admin-cli create-token --name <name> --role viewer|operator|admin --config <hub.json>');
  process.exit(2);
}
const role = Role.safeParse(values.role);
if (!role.success) {
  console.error(`--role must be one of ${Role.options.join(', ')}`);
  process.exit(2);
}
const config = loadConfig(HubConfig, configPathFromArgs());
const handle = connectDb(config.database.url, 1);
try {
  const { token, row } = await createApiToken(handle.db, values.name, role.data);
  console.log(JSON.stringify({ name: row.name, role: row.role, token }));
} finally {
  await handle.close();
}

import { randomUUID } from 'node:crypto';
import { configPathFromArgs } from '@fleet/config';
import { connectDb } from '@fleet/db';
import { Role } from '@fleet/domain';
import { loadHubConfigOrExit, parseCliArgs } from './cli-args.js';
import { ApiError } from './errors.js';
import { issueToken, TokenName } from './services/tokens.service.js';

// Bootstraps API tokens (the first admin cannot be made through the API).
const usage =
  `usage: admin-cli create-token --name <name> --role ${Role.options.join('|')} [--sites <id,id...>] ` +
  `[--expires-in <N>s|m|h|d] --config <hub.json>

Creates an API token and prints it once as JSON ({"id","name","role","sites","expires_at","token"}); Postgres keeps
only its hash. The creation is audited (actor admin-cli). viewer < operator < admin are people's roles; facility is a
building management system's: it may only post facility events and read its own (docs/day2.md, "Facility events"),
and its name is the events' source; satellite is a site's satellite: it needs --sites with exactly its site.
--sites limits the token to those sites (default: every site); --expires-in makes it stop working after that long
(default: never). Tokens are listed and revoked through the API (GET /v1/tokens, POST /v1/tokens/{id}/revoke;
docs/security.md). The config is the hub's (its database.url is used). Example:
  node --import tsx apps/hub/src/admin-cli.ts create-token --name ops-dc-a --role operator --sites dc-a ` +
  `--expires-in 90d --config deploy/config/hub.example.json`;

const { values, positionals } = parseCliArgs(
  {
    name: { type: 'string' },
    role: { type: 'string' },
    sites: { type: 'string' },
    'expires-in': { type: 'string' },
    config: { type: 'string' },
  },
  usage,
);
if (positionals[0] !== 'create-token' || !values.name) {
  console.error(usage);
  process.exit(2);
}
const fail = (message: string): never => {
  console.error(message);
  process.exit(2);
};
const role = Role.safeParse(values.role);
if (!role.success) fail(`--role must be one of ${Role.options.join(', ')}`);
const name = TokenName.safeParse(values.name);
if (!name.success) fail(`--name ${name.error!.issues[0]!.message}`);
const units: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };
const expiresIn = values['expires-in']?.match(/^(\d+)([smhd])$/);
if (values['expires-in'] !== undefined && !expiresIn) fail('--expires-in must be a number and a unit, e.g. 90d or 12h');
const sites = values.sites?.split(',').map((s) => s.trim());
const config = loadHubConfigOrExit(() => configPathFromArgs(), usage);
const handle = connectDb(config.database.url, 1);
try {
  const { token, row } = await issueToken(
    handle.db,
    {
      actor: { name: 'admin-cli', role: null, sites: null },
      requestId: randomUUID(),
      action: 'admin-cli create-token',
      idempotencyKey: undefined,
      fingerprint: '',
      audited: false,
    },
    {
      name: name.data!,
      role: role.data!,
      sites,
      expiresAt: expiresIn ? new Date(Date.now() + Number(expiresIn[1]) * units[expiresIn[2]!]! * 1000) : undefined,
    },
    { name: '--name', sites: '--sites', expires: '--expires-in' },
  );
  const expiresAt = row.expiresAt?.toISOString() ?? null;
  console.log(
    JSON.stringify({ id: row.id, name: row.name, role: row.role, sites: row.sites, expires_at: expiresAt, token }),
  );
} catch (err) {
  if (!(err instanceof ApiError)) throw err;
  console.error(err.message);
  process.exitCode = 2;
} finally {
  await handle.close();
}

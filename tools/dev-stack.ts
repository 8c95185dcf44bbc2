import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { connectDb, createApiToken, findActiveToken, migrateDatabase } from '@fleet/db';
import { startTemporalDevServer } from '@fleet/temporal';
import { ManagedProcess, repoRoot } from './lib/processes.js';

// `pnpm dev`: the whole stack with one simulated site (a GB200 rack's 18 compute
// trays), as separate processes, with state kept in .run/dev across restarts.
const dir = join(repoRoot, '.run', 'dev');
mkdirSync(dir, { recursive: true });
const ports = { hub: 8080, temporal: 7233, temporalUi: 8233, simAdmin: 8090, bmc: 8443, hubMetrics: 9464, agentMetrics: 9465, satelliteMetrics: 9466 };
const databaseUrl = 'postgres://postgres@127.0.0.1:5432/fleet_dev';
const siteId = 'dev';
const trays = 18;

function persisted<T>(name: string, make: () => T): T {
  const file = join(dir, name);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as T;
  const value = make();
  writeFileSync(file, JSON.stringify(value, null, 2), { mode: 0o600 });
  return value;
}
const writeConfig = (name: string, config: unknown) => {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
};

const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.connect();
if ((await admin.query(`select 1 from pg_database where datname = 'fleet_dev'`)).rowCount === 0) await admin.query('create database fleet_dev');
await admin.end();
await migrateDatabase(databaseUrl);

const temporal = await startTemporalDevServer({ port: ports.temporal, uiPort: ports.temporalUi, dbFile: join(dir, 'temporal.sqlite') });
const bmcPassword = persisted('bmc-password.json', () => ({ password: randomBytes(12).toString('hex') })).password;
const secretsFile = join(dir, 'secrets.json');
writeFileSync(secretsFile, JSON.stringify({ 'bmc/default': { username: 'admin', password: bmcPassword } }), { mode: 0o600 });

const procs = [
  new ManagedProcess('simulator', 'packages/simulators/src/main.ts', writeConfig('simulator', {
    timeScale: 0.1,
    admin: { port: ports.simAdmin },
    generate: [{ count: trays, idPrefix: 'compute-', firstAddress: '127.10.0.1', port: ports.bmc, username: 'admin', password: bmcPassword }],
  }), dir),
  new ManagedProcess('hub', 'apps/hub/src/main.ts', writeConfig('hub', {
    metrics: { port: ports.hubMetrics },
    database: { url: databaseUrl },
    http: { port: ports.hub },
    temporalUiUrl: `http://127.0.0.1:${ports.temporalUi}`,
  }), dir),
  new ManagedProcess('agent', 'apps/workflow-agent/src/main.ts', writeConfig('agent', {
    metrics: { port: ports.agentMetrics },
    database: { url: databaseUrl },
    temporal: { address: temporal.address },
    projection: { intervalMs: 500 },
  }), dir),
  new ManagedProcess('satellite', 'apps/satellite/src/main.ts', writeConfig('satellite', {
    siteId,
    metrics: { port: ports.satelliteMetrics },
    temporal: { address: temporal.address },
    secrets: { provider: 'file', path: secretsFile },
    redfish: { pollIntervalMs: 500 },
  }), dir),
];
const ready = ['redfish simulator ready', 'hub listening', 'workflow agent started', 'satellite worker started'];
for (const [i, p] of procs.entries()) await p.start(ready[i]!);

// Tokens: created once, kept in .run/dev/tokens.json (the database keeps only hashes).
const { db, close } = connectDb(databaseUrl, 2);
const tokens = persisted('tokens.json', () => ({}) as Record<string, string>);
for (const role of ['admin', 'operator', 'viewer'] as const) {
  if (!tokens[role] || !(await findActiveToken(db, tokens[role]))) {
    tokens[role] = (await createApiToken(db, `dev-${role}-${Date.now()}`, role)).token;
  }
}
writeFileSync(join(dir, 'tokens.json'), JSON.stringify(tokens, null, 2), { mode: 0o600 });
await close();

const hub = `http://127.0.0.1:${ports.hub}`;
const api = async (method: string, path: string, body?: unknown) =>
  fetch(`${hub}${path}`, { method, headers: { authorization: `Bearer ${tokens['admin']}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
if ((await api('GET', `/v1/sites/${siteId}`)).status === 404) await api('POST', '/v1/sites', { id: siteId, name: 'Simulated site' });
const existing = new Set(((await (await api('GET', `/v1/devices?site_id=${siteId}&limit=1000`)).json()) as { items: { name: string }[] }).items.map((d) => d.name));
const bmcs = ((await (await fetch(`http://127.0.0.1:${ports.simAdmin}/bmcs`)).json()) as { items: { id: string; url: string }[] }).items;
for (const b of bmcs) {
  if (!existing.has(b.id)) {
    await api('POST', '/v1/devices', { name: b.id, site_id: siteId, node_type: 'compute_gb200_nvidia', bmc_url: b.url, credential_ref: 'bmc/default' });
  }
}
const first = ((await (await api('GET', `/v1/devices?site_id=${siteId}&limit=1`)).json()) as { items: { id: string }[] }).items[0]!;

console.log(`
Fleet is up (site "${siteId}": ${bmcs.length} simulated GB200 compute trays).
  Hub API         ${hub}   (GET /healthz, /v1/devices, /v1/jobs)
  Temporal UI     http://127.0.0.1:${ports.temporalUi}
  Temporal        ${temporal.address}
  Simulator admin http://127.0.0.1:${ports.simAdmin}/bmcs
  Metrics         :${ports.hubMetrics} hub, :${ports.agentMetrics} agent, :${ports.satelliteMetrics} satellite (/metrics)
  Logs            ${dir}/*.log
Tokens (also in ${join(dir, 'tokens.json')}):
  admin    ${tokens['admin']}
  operator ${tokens['operator']}
  viewer   ${tokens['viewer']}
Try:
  curl -s -X POST ${hub}/v1/devices/${first.id}/power -H "Authorization: Bearer ${tokens['operator']}" -H 'content-type: application/json' -d '{"action":"on"}'
  curl -s ${hub}/v1/jobs -H "Authorization: Bearer ${tokens['viewer']}"
Ctrl-C stops everything.`);

const stop = async () => {
  for (const p of [...procs].reverse()) await p.stop();
  await temporal.stop();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());

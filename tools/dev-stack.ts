import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { connectDb, createApiToken, findActiveToken, migrateDatabase } from '@fleet/db';
import { startTemporalDevServer, type DevServer } from '@fleet/temporal';
import { randomKeyRingDocument } from '@fleet/temporal/codec';
import { startTemporalTlsProxy, type TemporalTlsProxy } from './lib/temporal-tls-proxy.js';
import { planFleet, simulatedSwitches, simulatorProfile } from './fleetgen/layout.js';
import { NetboxWriter, writeFleet } from './fleetgen/netbox-writer.js';
import { ManagedProcess, repoRoot } from './lib/processes.js';
import { seedFirmware } from './lib/demo-firmware.js';
import { writePrivateFile } from './lib/private-file.js';

// `pnpm dev`: the whole stack with one simulated site, as separate processes. NetBox
// holds the inventory (one GB200 NVL72 rack made by the fleet generator); the NetBox
// agent mirrors it; the simulator plays the same rack's BMCs at the addresses NetBox
// gives them. State is kept in .run/dev across restarts. `bash tools/down.sh` (or Ctrl-C) stops it all.
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(`usage: bash tools/up.sh   (installs, then runs this: node --import tsx tools/dev-stack.ts)

Starts Temporal, NetBox, the simulator, hub, NetBox agent, workflow agent and one satellite for site dev-01,
prints the URLs and API tokens, and runs until Ctrl-C, SIGTERM or \`bash tools/down.sh\` stops all of them.
State (database fleet_dev, NetBox database netbox_dev, logs, tokens) is kept in .run/dev.`);
  process.exit(0);
}
const dir = join(repoRoot, '.run', 'dev');
const ports = {
  hub: 8080,
  temporal: 7233,
  /** mTLS in front of the dev server (tools/lib/temporal-tls-proxy.ts): the agent and the satellite connect here. */
  temporalTls: 7234,
  temporalUi: 8233,
  netbox: 8001,
  simAdmin: 8090,
  bmc: 8443,
  nvue: 8444,
  nvosSsh: 8445,
  hubMetrics: 9464,
  agentMetrics: 9465,
  satelliteMetrics: 9466,
  netboxAgentMetrics: 9467,
};
const databaseUrl = 'postgres://postgres@127.0.0.1:5432/fleet_dev';
const siteId = 'dev-01';
const pidDir = join(dir, 'pids');
mkdirSync(pidDir, { recursive: true });
const t0 = Date.now();
/** Progress lines, so a start that takes a minute never looks hung. */
const say = (line: string) => console.log(`[dev ${((Date.now() - t0) / 1000).toFixed(0).padStart(3)}s] ${line}`);

// One dev stack at a time: a second one would fight the first for its ports.
const stackPidFile = join(dir, 'dev-stack.pid');
const stackMarker = 'tools/dev-stack.ts';
if (existsSync(stackPidFile)) {
  const [pid] = readFileSync(stackPidFile, 'utf8').split(' ');
  const cmdline = (() => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return '';
    }
  })();
  if (cmdline.includes(stackMarker)) {
    console.error(`the dev stack already runs (pid ${pid}); stop it first with: bash tools/down.sh`);
    process.exit(1);
  }
}
writeFileSync(stackPidFile, `${process.pid} ${stackMarker}\n`);
/** Each process as `<pid> <text of its command line>`, so tools/down.sh can stop what a dead stack left. */
const recordPid = (name: string, pid: number | undefined, marker: string) => {
  if (pid) writeFileSync(join(pidDir, `${name}.pid`), `${pid} ${marker}\n`);
};
// The guardian: tools/down.sh --after <this pid>, in its own session so no Ctrl-C or SIGKILL of this process
// reaches it; when this process is gone without having stopped everything, it stops what is left.
const guardianLog = openSync(join(dir, 'down.log'), 'a');
const guardian = spawn('bash', [join(repoRoot, 'tools/down.sh'), '--after', String(process.pid)], {
  cwd: repoRoot,
  detached: true,
  stdio: ['ignore', guardianLog, guardianLog],
});
guardian.unref();
closeSync(guardianLog);

const procs: [ManagedProcess, string][] = [];
// Assigned once Temporal runs; read by stop() whenever a signal comes.
let temporal: DevServer | undefined = undefined;
let temporalTls: TemporalTlsProxy | undefined = undefined;
let netboxStarted = false;
let slurmStarted = false;
const slurmDir = join(dir, 'slurm');
let stopping = false;
/** Stops whatever has started so far, newest first; runs on Ctrl-C, SIGTERM, SIGHUP or a failed start. */
const stop = async (why: string, code: number) => {
  if (stopping) return;
  stopping = true;
  say(`stopping (${why})`);
  for (const [p] of [...procs].reverse()) {
    if (!p.child) continue;
    const exit = await p.stop();
    say(`  ${p.name} stopped (exit ${exit})`);
    rmSync(join(pidDir, `${p.name}.pid`), { force: true });
  }
  if (temporalTls) {
    await temporalTls.stop();
    say('  Temporal mTLS proxy stopped');
    rmSync(join(pidDir, 'temporal-tls.pid'), { force: true });
  }
  if (temporal) {
    await temporal.stop();
    say('  Temporal stopped');
    rmSync(join(pidDir, 'temporal.pid'), { force: true });
  }
  if (slurmStarted) {
    execFileSync('bash', [join(repoRoot, 'tools/slurm/stop.sh'), slurmDir], { cwd: repoRoot, stdio: 'inherit' });
    say('  SLURM stopped');
  }
  if (netboxStarted)
    execFileSync('bash', [join(repoRoot, 'tools/netbox/stop.sh'), '--port', String(ports.netbox)], {
      cwd: repoRoot,
      stdio: 'inherit',
    });
  // Everything is stopped: the guardian has nothing left to do.
  rmSync(stackPidFile, { force: true });
  process.kill(guardian.pid!, 'SIGTERM');
  say('stopped');
  process.exit(code);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(signal, 0));
// A start interrupted by a stop fails on its own ("exited before ready"): that is the stop, not a second error.
process.on('uncaughtException', (err) => {
  if (stopping) return;
  console.error(err);
  void stop(`failed: ${err.message}`, 1);
});
process.on('unhandledRejection', (err) => {
  if (stopping) return;
  console.error(err);
  void stop(`failed: ${err instanceof Error ? err.message : String(err)}`, 1);
});

function persisted<T>(name: string, make: () => T): T {
  const file = join(dir, name);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as T;
  const value = make();
  writePrivateFile(file, JSON.stringify(value, null, 2));
  return value;
}
// Configs are private: the simulator's holds the BMC password.
const writeConfig = (name: string, config: unknown) => {
  const file = join(dir, `${name}.json`);
  writePrivateFile(file, JSON.stringify(config, null, 2));
  return file;
};

say('database fleet_dev: creating and migrating');
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.connect();
if ((await admin.query(`select 1 from pg_database where datname = 'fleet_dev'`)).rowCount === 0)
  await admin.query('create database fleet_dev');
await admin.end();
await migrateDatabase(databaseUrl);

// Tokens: created once, kept in .run/dev/tokens.json (the database keeps only hashes).
const { db, close } = connectDb(databaseUrl, 2);
const tokens = persisted('tokens.json', () => ({}) as Record<string, string>);
for (const role of ['admin', 'operator', 'viewer'] as const) {
  if (!tokens[role] || !(await findActiveToken(db, tokens[role]))) {
    tokens[role] = (await createApiToken(db, `dev-${role}-${Date.now()}`, role)).token;
  }
}
// The satellite's own: it reads only what its site's jobs need (docs/security.md "Per-site roles").
if (!tokens['satellite'] || !(await findActiveToken(db, tokens['satellite']))) {
  const name = `dev-satellite-${siteId}-${Date.now()}`;
  tokens['satellite'] = (
    await createApiToken(db, name, 'satellite', { sites: [siteId], createdBy: 'dev-stack' })
  ).token;
}
writePrivateFile(join(dir, 'tokens.json'), JSON.stringify(tokens, null, 2));
await close();

say(`NetBox: starting on :${ports.netbox} (usually 10-60 s)`);
netboxStarted = true;
const netbox = JSON.parse(
  execFileSync(
    'bash',
    [join(repoRoot, 'tools/netbox/start.sh'), '--port', String(ports.netbox), '--db', 'netbox_dev'],
    { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  )
    .trim()
    .split('\n')
    .pop()!,
) as { url: string; token: string; pid: number };
say(`NetBox: ready at ${netbox.url}`);
const netboxTokenFile = join(dir, 'netbox-token');
writePrivateFile(netboxTokenFile, netbox.token);

const bmcPassword = persisted('bmc-password.json', () => ({ password: randomBytes(12).toString('hex') })).password;
const fleet = planFleet({
  sites: 1,
  racksPerSite: 1,
  rackTypes: ['gb200_nvl72'],
  firstAddress: '127.20.0.1',
  sitePrefix: 'dev',
});
const writer = new NetboxWriter(netbox.url, netbox.token);
const present = await writer.call<{ count: number }>('GET', `/api/dcim/sites/?slug=${siteId}`);
const nvos = { nvuePort: ports.nvue, sshPort: ports.nvosSsh };
if (present.count === 0) {
  say(`NetBox: writing site ${siteId} (one GB200 NVL72 rack, ${fleet.devices.length} devices; about a minute, once)`);
  await writeFleet(writer, fleet, {
    managementProfile: `redfish-http:${ports.bmc}`,
    credentialRef: 'bmc/default',
    nvos,
  });
}

// Temporal payloads are encrypted (docs/security.md): one key ring, kept with the stack's state so that the histories
// in temporal.sqlite stay readable across restarts.
const keyRingFile = join(dir, 'temporal-payload-keys.json');
if (!existsSync(keyRingFile)) writePrivateFile(keyRingFile, randomKeyRingDocument());
const secretsFile = join(dir, 'secrets.json');
// The satellite fetches firmware from the hub, stores inventory documents and delivers health readings there with its
// satellite token, resolved by reference like BMC credentials.
writePrivateFile(
  secretsFile,
  JSON.stringify({
    'bmc/default': { username: 'admin', password: bmcPassword },
    'hub/token': { username: 'satellite', password: tokens['satellite'] },
    'temporal/payload-keys': { username: 'temporal', password: readFileSync(keyRingFile, 'utf8') },
  }),
);
// Burn-in runs on a single-node SLURM of the stack's own (docs/burn-in-slurm.md); its job scripts ask the simulator.
say(`SLURM: starting (tools/slurm/start.sh ${slurmDir})`);
execFileSync('bash', [join(repoRoot, 'tools/slurm/start.sh'), slurmDir], {
  cwd: repoRoot,
  stdio: ['ignore', 'ignore', 'inherit'],
});
slurmStarted = true;
const slurm = JSON.parse(readFileSync(join(slurmDir, 'cluster.json'), 'utf8')) as {
  url: string;
  user: string;
  tokenFile: string;
  partition: string;
  jobsDir: string;
};

say(`Temporal: starting on :${ports.temporal}`);
temporal = await startTemporalDevServer({
  port: ports.temporal,
  uiPort: ports.temporalUi,
  dbFile: join(dir, 'temporal.sqlite'),
});
recordPid('temporal', temporal.process.pid, 'start-dev');
// The agent and the satellite reach Temporal over mTLS, each with a certificate of its own, as on a site
// (docs/security.md "Temporal over mTLS").
temporalTls = await startTemporalTlsProxy({ dir, target: temporal.address, port: ports.temporalTls });
recordPid('temporal-tls', temporalTls.pid, 'nginx');
say(`Temporal: mTLS on :${ports.temporalTls}`);

procs.push(
  [
    new ManagedProcess(
      'simulator',
      'packages/simulators/src/main.ts',
      writeConfig('simulator', {
        timeScale: 0.1,
        admin: { port: ports.simAdmin },
        bmcs: fleet.devices.map((d) => ({
          id: d.name,
          address: d.ip,
          port: ports.bmc,
          username: 'admin',
          password: bmcPassword,
          profile: simulatorProfile(d),
          powerDomain: `${d.site}/${d.rack}`,
          // The hardware reports the serial NetBox holds, so an enrolment's profile check finds it as recorded.
          serialNumber: d.serial,
        })),
        // The switch trays' NVOS (NVUE REST, SSH/SFTP) beside their BMCs, with the same login.
        switches: simulatedSwitches(fleet, { ...nvos, password: bmcPassword }),
      }),
      dir,
    ),
    'redfish simulator ready',
  ],
  [
    new ManagedProcess(
      'hub',
      'apps/hub/src/main.ts',
      writeConfig('hub', {
        metrics: { port: ports.hubMetrics },
        database: { url: databaseUrl },
        http: { port: ports.hub, allowPlainHttp: true },
        temporalUiUrl: `http://127.0.0.1:${ports.temporalUi}`,
        temporalPayloadEncryption: { keyRingFile, uiOrigins: [`http://127.0.0.1:${ports.temporalUi}`] },
        firmware: { blobDir: join(dir, 'blobs') },
      }),
      dir,
    ),
    'hub listening',
  ],
  [
    new ManagedProcess(
      'netbox-agent',
      'apps/netbox-agent/src/main.ts',
      writeConfig('netbox-agent', {
        metrics: { port: ports.netboxAgentMetrics },
        database: { url: databaseUrl },
        netbox: { url: netbox.url, tokenFile: netboxTokenFile },
        sync: { intervalS: 5 },
      }),
      dir,
    ),
    'netbox sync done',
  ],
  [
    new ManagedProcess(
      'agent',
      'apps/workflow-agent/src/main.ts',
      writeConfig('agent', {
        metrics: { port: ports.agentMetrics },
        database: { url: databaseUrl },
        temporal: {
          address: temporalTls.address,
          tls: temporalTls.clientTls('workflow-agent'),
          payloadEncryption: { keyRingFile },
        },
        projection: { intervalMs: 500 },
      }),
      dir,
    ),
    'workflow agent started',
  ],
  [
    new ManagedProcess(
      'satellite',
      'apps/satellite/src/main.ts',
      writeConfig('satellite', {
        siteId,
        metrics: { port: ports.satelliteMetrics },
        temporal: {
          address: temporalTls.address,
          tls: temporalTls.clientTls(`satellite-${siteId}`),
          payloadEncryption: { keyRingRef: 'temporal/payload-keys' },
        },
        secrets: { provider: 'file', path: secretsFile },
        hub: { url: `http://127.0.0.1:${ports.hub}`, tokenRef: 'hub/token' },
        artifacts: { dir: join(dir, 'artifacts') },
        dataDir: join(dir, 'satellite-data'),
        redfish: { pollIntervalMs: 500 },
        burnIn: {
          slurm: { url: slurm.url, user: slurm.user, tokenFile: slurm.tokenFile, partition: slurm.partition },
          outputDir: slurm.jobsDir,
          timeLimitsMin: { gpu_stress: 10, memory: 10, nvlink_allreduce: 10 },
          pollIntervalMs: 1000,
          site: { kind: 'simulated', simulatorUrl: `http://127.0.0.1:${ports.simAdmin}` },
        },
      }),
      dir,
    ),
    'satellite worker started',
  ],
);
const readyMeaning: Record<string, string> = { 'netbox-agent': ' (first sync of NetBox done)' };
for (const [p, ready] of procs) {
  const started = Date.now();
  say(`${p.name}: starting (log ${p.logFile})`);
  await p.start(ready, 120_000);
  recordPid(p.name, p.pid, p.entry);
  say(`${p.name}: ready in ${((Date.now() - started) / 1000).toFixed(1)} s${readyMeaning[p.name] ?? ''}`);
}
say('firmware catalog: seeding the demo packages');

const hub = `http://127.0.0.1:${ports.hub}`;
const { manifest, nvosImageId } = await seedFirmware(hub, tokens);
const firstOf = async (role: string) =>
  (
    (await (
      await fetch(`${hub}/v1/devices?site_id=${siteId}&role=${role}&limit=1`, {
        headers: { authorization: `Bearer ${tokens['viewer']}` },
      })
    ).json()) as { items: { id: string; name: string }[] }
  ).items[0]!;
const first = await firstOf('compute-tray');
const rack = (
  (await (
    await fetch(`${hub}/v1/racks?site_id=${siteId}`, {
      headers: { authorization: `Bearer ${tokens['viewer']}` },
    })
  ).json()) as { items: { id: string; name: string }[] }
).items[0]!;
const firstSwitch = await firstOf('nvlink-switch-tray');

console.log(
  `
Fleet is up: site "${siteId}", one GB200 NVL72 rack (${fleet.devices.length} devices: 18 compute trays, 9 NVLink
switch trays, 8 power shelves) in NetBox, mirrored by the NetBox agent, played by the simulator.
  Web console     ${hub}/   (sign in with a token below)
  Hub API         ${hub}   (GET /healthz, /openapi.json, /docs, /v1/devices, /v1/racks, /v1/jobs)
  Temporal UI     http://127.0.0.1:${ports.temporalUi}   (gRPC :${ports.temporal}; mTLS :${ports.temporalTls}, ` +
    `certificates in ${dir}/temporal-tls)
                  (payloads are encrypted; decoded for an admin by the hub: temporal workflow show -w <job id> \\
                    --codec-endpoint ${hub}/v1/temporal-codec --codec-auth "Bearer ${tokens['admin']}")
  NetBox          ${netbox.url}   (API token in ${netboxTokenFile}; UI user admin, password in ` +
    `.tools/netbox-state/admin_password)
  Simulator admin http://127.0.0.1:${ports.simAdmin}/bmcs and /switches
  Metrics         :${ports.hubMetrics} hub, :${ports.agentMetrics} workflow agent, ` +
    `:${ports.satelliteMetrics} satellite, :${ports.netboxAgentMetrics} NetBox agent (/metrics)
  Logs            ${dir}/*.log
Tokens (also in ${join(dir, 'tokens.json')}):
  admin    ${tokens['admin']}
  operator ${tokens['operator']}
  viewer   ${tokens['viewer']}
Try (${first.name}):
  curl -s -X POST ${hub}/v1/devices/${first.id}/power -H "Authorization: Bearer ${tokens['operator']}" ` +
    `-H 'content-type: application/json' -d '{"action":"on"}'
  curl -s ${hub}/v1/jobs -H "Authorization: Bearer ${tokens['viewer']}"
Firmware (manifest "${manifest}" is the GB200 compute default):
  curl -s "${hub}/v1/firmware/compliance/summary?site_id=${siteId}" -H "Authorization: Bearer ${tokens['viewer']}"
  curl -s -X POST ${hub}/v1/firmware-campaigns -H "Authorization: Bearer ${tokens['operator']}" ` +
    `-H 'content-type: application/json' ` +
    `-d '{"name":"demo","site_id":"${siteId}","node_types":["compute_gb200_nvidia"],"dry_run":true}'
Switch NVOS (${firstSwitch.name}; its NVUE at http://<its address>:${ports.nvue}, SSH on :${ports.nvosSsh}):
  curl -s -X POST ${hub}/v1/devices/${firstSwitch.id}/nvos-install -H "Authorization: Bearer ${tokens['operator']}" ` +
    `-H 'content-type: application/json' -d '{"package_id":"${nvosImageId}"}'
Enrolment (BMCs, credentials, inventory, NVLink topology, firmware baseline, burn-in on SLURM, certified;
docs/enrolment.md): a failed stage waits for POST /v1/jobs/{id}/decision (retry, skip, reject)
  curl -s -X POST ${hub}/v1/racks/${rack.id}/enrol -H "Authorization: Bearer ${tokens['operator']}"
Command line (pnpm fleetctl --help):
  export FLEET_TOKEN=${tokens['operator']}
  pnpm fleetctl config set-context dev --hub ${hub} --token-env FLEET_TOKEN && pnpm fleetctl login
  pnpm fleetctl get racks --site ${siteId}
Ctrl-C here, or \`bash tools/down.sh\` from another shell, stops everything.`,
);

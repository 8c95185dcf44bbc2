import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectDb, createApiToken, upsertDevices, upsertRacks, upsertSites, type Db } from '@fleet/db';
import { cloneTestDatabase, prepareTemplate } from '@fleet/db/testing';
import { freePort } from '@fleet/temporal';
import pg from 'pg';
import { planFleet } from '../../tools/fleetgen/layout.js';
import { mirrorDeviceRow } from '../../tools/fleetgen/mirror-rows.js';
import { loopbackServer } from '@fleet/simulators/pki';
import { ManagedProcess, repoRoot } from '../../tools/lib/processes.js';

export interface SeededHub {
  /** The hub's base URL, e.g. http://127.0.0.1:40123. */
  url: string;
  /** An API token of the requested role. */
  token: string;
  hub: ManagedProcess;
  /** A connection to the hub's (cloned) database. */
  db: Db;
  /** Scratch folder (hub config and log); removed by close(). */
  dir: string;
  /** With `tls`: the CA certificate (PEM) the hub's certificate chains to. */
  ca?: string;
  /** Stops the hub, drops the cloned and template databases and removes `dir`. */
  close(): Promise<void>;
}

export interface SeededHubOptions {
  /** Names the template database, the scratch folder (.run/bench-<name>) and the token. */
  name: string;
  devices: number;
  role?: Parameters<typeof createApiToken>[2];
  /** The hub's database pool; the hub's own default when absent. */
  poolSize?: number;
  /** HTTPS with a certificate from a CA of its own (`ca` in the answer); plain HTTP otherwise. */
  tls?: boolean;
  /** More hub config (e.g. its firmware blob folder), given the scratch folder. */
  hubConfig?: (dir: string) => Record<string, unknown>;
}

/**
 * A hub (as a separate process, the way it is deployed) over a fresh clone of the test database holding `devices`
 * NVL72 devices in the NetBox mirror, with an API token. Everything it made is undone by close(), and by itself
 * when starting fails.
 */
export async function startSeededHub(options: SeededHubOptions): Promise<SeededHub> {
  const databaseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const template = `fleet_bench_${options.name}_${process.pid}`;
  const dir = join(repoRoot, '.run', `bench-${options.name}`);
  mkdirSync(dir, { recursive: true });
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of cleanups.splice(0)) await c().catch(() => undefined);
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`drop database if exists "${template}" with (force)`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await prepareTemplate(databaseUrl, template);
    const database = await cloneTestDatabase(databaseUrl, template);
    cleanups.unshift(() => database.drop());
    const handle = connectDb(database.url, 4);
    cleanups.unshift(() => handle.close());
    if (options.devices > 0) await seedFleet(handle.db, options.devices);
    const token = (await createApiToken(handle.db, `bench-${options.name}`, options.role ?? 'viewer')).token;

    const port = await freePort();
    const pki = options.tls ? loopbackServer(dir, 'bench-ca') : undefined;
    const hubConfig = join(dir, 'hub.json');
    writeFileSync(
      hubConfig,
      JSON.stringify({
        log: { level: 'info' },
        metrics: { port: 0 },
        database: { url: database.url, ...(options.poolSize ? { poolSize: options.poolSize } : {}) },
        http: { port, ...(pki ? { tls: pki.tls } : { allowPlainHttp: true }) },
        // The bench measures the hub's own latency: many clients share one token.
        rateLimit: { enabled: false },
        ...options.hubConfig?.(dir),
      }),
    );
    const hub = new ManagedProcess('hub', 'apps/hub/src/main.ts', hubConfig, dir);
    cleanups.unshift(() => hub.stop());
    await hub.start('hub listening');
    const url = `${pki ? 'https' : 'http'}://127.0.0.1:${port}`;
    return { url, token, hub, db: handle.db, dir, close, ...(pki ? { ca: pki.ca.certPem } : {}) };
  } catch (err) {
    await close();
    throw err;
  }
}

/** NVL72 racks straight into the mirror, the way the NetBox agent writes them; `count` devices in all. */
export async function seedFleet(db: Db, count: number): Promise<void> {
  const racksPerSite = 72;
  const sites = Math.ceil(count / (35 * racksPerSite));
  const fleet = planFleet({ sites, racksPerSite, rackTypes: ['gb200_nvl72'], firstAddress: '127.80.0.1' });
  const ts = new Date().toISOString();
  const siteIds = new Map(fleet.sites.map((s, i) => [s.slug, i + 1]));
  await upsertSites(
    db,
    fleet.sites.map((s) => ({
      netboxId: siteIds.get(s.slug)!,
      slug: s.slug,
      name: s.name,
      status: 'active',
      netboxLastUpdated: ts,
    })),
  );
  const rackIds = new Map(fleet.racks.map((r, i) => [`${r.site}/${r.name}`, 1000 + i]));
  await upsertRacks(
    db,
    fleet.racks.map((r) => ({
      netboxId: rackIds.get(`${r.site}/${r.name}`)!,
      siteNetboxId: siteIds.get(r.site)!,
      name: r.name,
      rackType: r.type,
      status: 'active',
      uHeight: 48,
      serial: null,
      netboxLastUpdated: ts,
    })),
  );
  const devices = fleet.devices.slice(0, count);
  for (let i = 0; i < devices.length; i += 1000) {
    await upsertDevices(
      db,
      devices.slice(i, i + 1000).map((d, j) =>
        mirrorDeviceRow(
          d,
          {
            netboxId: 100_000 + i + j,
            siteNetboxId: siteIds.get(d.site)!,
            rackNetboxId: rackIds.get(`${d.site}/${d.rack}`)!,
          },
          'redfish-https:443',
          ts,
        ),
      ),
    );
  }
}

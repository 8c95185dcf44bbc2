import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import pg from 'pg';
import { connectDb, createApiToken, deviceJsonListQuery, deviceListQuery, getOrCreateSyncState } from '@fleet/db';
import { cloneTestDatabase, prepareTemplate } from '@fleet/db/testing';
import { freePort } from '@fleet/temporal';
import { createFleetClient, unwrap } from '@fleet/client';
import { createSyncMetrics, NetboxClient, NetboxSync } from '@fleet/netbox-agent';
import { planFleet } from '../tools/fleetgen/layout.js';
import { bulkLoadFleet, NetboxWriter, writeFleet } from '../tools/fleetgen/netbox-writer.js';
import { ManagedProcess, repoRoot } from '../tools/lib/processes.js';
import { hubHttp } from './lib/hub-http.js';
import { compareSides, load, percentiles } from './lib/page-load.js';
import { startNetbox, type NetboxServer } from '../test/harness/netbox.js';

/**
 * The NetBox mirror at fleet scale: a real NetBox with ~10,000 NVL72 devices, the
 * agent's initial and incremental syncs (NetBox requests counted), and the same
 * filtered device page served by the hub and by NetBox under 20 concurrent clients.
 */
/** Concurrent clients on each side: the hub, raw SQL and NetBox. */
const clients = 20;

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const sites = Number(args[0] ?? 4);
  const racksPerSite = Number(args[1] ?? 72);
  const databaseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const template = `fleet_bench_inv_${process.pid}`;
  await prepareTemplate(databaseUrl, template);
  const dir = join(repoRoot, '.run', 'bench-inventory');
  mkdirSync(dir, { recursive: true });

  const netbox = await startNetbox();
  const small = await startNetbox();
  const cleanups: (() => Promise<unknown>)[] = [() => netbox.stop(true), () => small.stop(true)];
  try {
    const fleet = planFleet({
      sites,
      racksPerSite,
      rackTypes: ['gb200_nvl72', 'gb300_nvl72'],
      firstAddress: '127.64.0.1',
      sitePrefix: 'site',
    });
    const populateStart = Date.now();
    // NetBox's REST API creates a few objects a second here: load 40,000 through its ORM.
    await bulkLoadFleet(netbox.db, fleet, {
      managementProfile: 'redfish-https:443',
      credentialRef: 'bmc/default',
      nvos: { nvuePort: 8444, sshPort: 22 },
    });
    const populateS = (Date.now() - populateStart) / 1000;
    await writeFleet(
      new NetboxWriter(small.url, small.token),
      planFleet({ sites: 1, racksPerSite: 1, rackTypes: ['gb200_nvl72'], firstAddress: '127.65.0.1' }),
      { managementProfile: 'redfish', credentialRef: 'bmc/default', nvos: { nvuePort: 8444, sshPort: 22 } },
    );

    const syncOnce = async (nb: NetboxServer, tenChanges: boolean) => {
      const db = await cloneTestDatabase(databaseUrl, template);
      cleanups.push(() => db.drop());
      const handle = connectDb(db.url, 4);
      cleanups.push(() => handle.close());
      await getOrCreateSyncState(handle.db, 'netbox');
      const client = new NetboxClient(nb.url, nb.token, { pageSize: 500, timeoutMs: 120_000 });
      const sync = new NetboxSync({
        db: handle.db,
        client,
        log: pino({ level: 'silent' }),
        metrics: createSyncMetrics(new Registry(), () => undefined),
        settings: { intervalS: 30, fullSyncIntervalS: 3600, overlapS: 10 },
      });
      const t0 = Date.now();
      const full = await sync.full();
      const fullS = (Date.now() - t0) / 1000;
      // One incremental pass re-reads the overlap window behind the watermark (the fleet was
      // just loaded); the measured pass is the next one, after ten changes.
      await sync.incremental();
      if (tenChanges) {
        const w = new NetboxWriter(nb.url, nb.token);
        const ids = (
          await w.call<{ results: { id: number }[] }>('GET', '/api/dcim/devices/?limit=10&ordering=-id')
        ).results.map((r) => r.id);
        await w.bulk(
          'PATCH',
          '/api/dcim/devices/',
          ids.map((id, i) => ({ id, serial: `BENCH-${i}` })),
        );
      }
      const inc = await sync.incremental();
      await client.close();
      return { db, handle, full, fullS, inc };
    };

    const big = await syncOnce(netbox, true);
    const baseline = await syncOnce(small, true);
    const devices = Object.values(big.full.written).length ? big.full.written['device']! : 0;

    // The hub as its own process over the synced mirror.
    const hubPort = await freePort();
    const hubConfig = join(dir, 'hub.json');
    writeFileSync(
      hubConfig,
      JSON.stringify({
        log: { level: 'info' },
        metrics: { port: 0 },
        database: { url: big.db.url, poolSize: 20 },
        http: { port: hubPort, allowPlainHttp: true },
        // The bench measures the hub's own latency: many clients share one token.
        rateLimit: { enabled: false },
      }),
    );
    const hub = new ManagedProcess('hub', 'apps/hub/src/main.ts', hubConfig, dir);
    await hub.start('hub listening');
    cleanups.unshift(() => hub.stop());
    const hubToken = (await createApiToken(big.handle.db, 'bench', 'viewer')).token;

    // The same question to both: compute trays of one site, a page of 100.
    const query = { site_id: ['site-02'], role: ['compute-tray'], limit: 100 };
    // The hub loaded through a lean HTTP client, and the same page through the generated one (bench/lib/hub-http.ts).
    const http = hubHttp(`http://127.0.0.1:${hubPort}`, hubToken, clients);
    cleanups.unshift(() => http.close());
    const hubPage = async () => (await http.get<{ items: unknown[] }>('/v1/devices', query)).items.length;
    const hubApi = createFleetClient({ baseUrl: `http://127.0.0.1:${hubPort}`, token: hubToken });
    const clientPage = async () => (await unwrap(hubApi.GET('/v1/devices', { params: { query } }))).items.length;
    // The statement the hub's page rests on (the repository builds it; limit + 1 tells whether a next page exists),
    // raw over pg with a pool of the hub's size: what the hub adds on top of Postgres. And the hub's whole statement
    // (each device's JSON written by Postgres, a row each), sent by name as the hub sends it.
    const filters = { siteId: query.site_id, role: query.role };
    const statement = deviceListQuery(big.handle.db, { limit: query.limit + 1, sort: 'name', filters }).toSQL();
    const json = deviceJsonListQuery(big.handle.db, { limit: query.limit, sort: 'name', filters }, 'netbox');
    const rawPool = new pg.Pool({ connectionString: big.db.url, max: 20 });
    cleanups.unshift(() => rawPool.end());
    const rawPage = async () =>
      Math.min(query.limit, (await rawPool.query(statement.sql, statement.params)).rows.length);
    const jsonPage = async () => Math.min(query.limit, (await rawPool.query(json)).rows.length);
    const netboxPage = async () => {
      const url = `${netbox.url}/api/dcim/devices/?site=site-02&role=compute-tray&limit=100`;
      const res = await fetch(url, { headers: { authorization: `Bearer ${netbox.token}` } });
      if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
      return ((await res.json()) as { results: unknown[] }).results.length;
    };
    const [hubStats, viaClient, rawStats, jsonStats] = await compareSides(
      [
        { what: 'hub', page: hubPage, servers: [{ name: 'hub', pid: hub.pid! }] },
        { what: 'hub, generated client', page: clientPage, servers: [{ name: 'hub', pid: hub.pid! }] },
        { what: 'raw SQL', page: rawPage },
        { what: 'raw JSON SQL', page: jsonPage },
      ],
      { requests: 2000, rounds: 2, clients, expected: query.limit, admin: rawPool, database: big.db.name },
    );
    const nb = await load('NetBox', netboxPage, 200, clients, query.limit);
    const nbStats = { ...percentiles(nb.times), n: nb.times.length, errors: nb.errors };

    return {
      devices,
      sites,
      racks: fleet.racks.length,
      netbox_populate_s: populateS,
      initial_sync_s: Number(big.fullS.toFixed(2)),
      initial_sync_netbox_requests: big.full.requests,
      incremental_sync_netbox_requests: big.inc.requests,
      incremental_sync_changes: big.inc.written['device'],
      incremental_sync_netbox_requests_35_devices: baseline.inc.requests,
      hub_list_p50_ms: hubStats.p50,
      hub_list_p99_ms: hubStats.p99,
      hub_list_requests: hubStats.requests,
      hub_list_errors: hubStats.errors,
      raw_sql_list_p50_ms: rawStats.p50,
      raw_sql_list_p99_ms: rawStats.p99,
      raw_sql_list_errors: rawStats.errors,
      hub_over_raw_sql_p99: Number((hubStats.p99 / rawStats.p99).toFixed(2)),
      raw_json_sql_list_p50_ms: jsonStats.p50,
      raw_json_sql_list_p99_ms: jsonStats.p99,
      hub_over_raw_json_sql_p99: Number((hubStats.p99 / jsonStats.p99).toFixed(2)),
      hub_list_cpu_ms: hubStats.cpuMs,
      raw_sql_list_cpu_ms: rawStats.cpuMs,
      raw_json_sql_list_cpu_ms: jsonStats.cpuMs,
      hub_over_raw_sql_cpu: Number((hubStats.cpuMs.total / rawStats.cpuMs.total).toFixed(2)),
      hub_list_generated_client_p50_ms: viaClient.p50,
      hub_list_generated_client_p99_ms: viaClient.p99,
      hub_list_generated_client_cpu_ms: viaClient.cpuMs,
      hub_list_generated_client_errors: viaClient.errors,
      netbox_list_p50_ms: nbStats.p50,
      netbox_list_p99_ms: nbStats.p99,
      netbox_list_requests: nbStats.n,
      netbox_list_errors: nbStats.errors,
      concurrent_clients: clients,
    };
  } finally {
    for (const c of cleanups) await c().catch(() => undefined);
    const pg = await import('pg');
    const admin = new pg.default.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`drop database if exists "${template}" with (force)`);
    await admin.end();
  }
}

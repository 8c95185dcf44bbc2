import pg from 'pg';
import { createFleetClient, unwrap } from '@fleet/client';
import { deviceJsonListQuery, deviceListQuery } from '@fleet/db';
import { hubHttp } from './lib/hub-http.js';
import { compareSides } from './lib/page-load.js';
import { startSeededHub } from './lib/seeded-hub.js';

/** As bench/inventory.ts: 20 concurrent clients (the fifth argument sets another, the scale bench's 50). */
const defaultClients = 20;
/** The question bench/inventory.ts asks: compute trays of one site, a page of 100. */
const query = { site_id: ['site-02'], role: ['compute-tray'], limit: 100 };

/**
 * The hub's filtered device page under 20 concurrent clients, against the very statement the hub runs for it (built by
 * the same repository function) sent raw over `pg` with a pool of the hub's size at the same concurrency, in the same
 * run: what the hub adds on top of Postgres shows as `hub_over_raw_sql_p99`. The hub is loaded through a lean HTTP
 * client (lib/hub-http.ts); the same page through the generated client is `hub_list_generated_client_*`. The baseline
 * is the plain page select (listDevices); the hub wraps it so that Postgres also writes each device's JSON (a row
 * each), and that whole statement raw, sent by name as the hub sends it, is `raw_json_sql_list_*`. Each side's CPU per
 * request (`*_cpu_ms`: the hub process, the database's Postgres backends, this process as the client) is the figure a
 * shared machine's load moves least. Arguments: devices, requests per side, rounds, pool size, concurrent clients.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const count = Number(args[0] ?? 10_000);
  const requests = Number(args[1] ?? 2000);
  const rounds = Number(args[2] ?? 2);
  const poolSize = Number(args[3] ?? 20);
  const clients = Number(args[4] ?? defaultClients);
  const stack = await startSeededHub({ name: 'hub-list', devices: count, role: 'viewer', poolSize });
  const databaseUrl = stack.db.$client.options.connectionString!;
  const raw = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  const http = hubHttp(stack.url, stack.token, clients);
  try {
    const hubPage = async () => (await http.get<{ items: unknown[] }>('/v1/devices', query)).items.length;
    const api = createFleetClient({ baseUrl: stack.url, token: stack.token });
    const clientPage = async () => (await unwrap(api.GET('/v1/devices', { params: { query } }))).items.length;
    // The page select reads one row more than the page to know whether a next page exists.
    const statement = deviceListQuery(stack.db, {
      limit: query.limit + 1,
      sort: 'name',
      filters: { siteId: query.site_id, role: query.role },
    }).toSQL();
    const rawPage = async () => Math.min(query.limit, (await raw.query(statement.sql, statement.params)).rows.length);
    const json = deviceJsonListQuery(
      stack.db,
      { limit: query.limit, sort: 'name', filters: { siteId: query.site_id, role: query.role } },
      'netbox',
    );
    const jsonPage = async () => Math.min(query.limit, (await raw.query(json)).rows.length);

    const [hub, viaClient, sql, jsonSql] = await compareSides(
      [
        { what: 'hub', page: hubPage, servers: [{ name: 'hub', pid: stack.hub.pid! }] },
        { what: 'hub, generated client', page: clientPage, servers: [{ name: 'hub', pid: stack.hub.pid! }] },
        { what: 'raw SQL', page: rawPage },
        { what: 'raw JSON SQL', page: jsonPage },
      ],
      {
        requests,
        rounds,
        clients,
        expected: query.limit,
        admin: raw,
        database: new URL(databaseUrl).pathname.slice(1),
      },
    );
    return {
      devices: count,
      hub_list_p50_ms: hub.p50,
      hub_list_p99_ms: hub.p99,
      raw_sql_list_p50_ms: sql.p50,
      raw_sql_list_p99_ms: sql.p99,
      hub_over_raw_sql_p99: Number((hub.p99 / sql.p99).toFixed(2)),
      raw_json_sql_list_p50_ms: jsonSql.p50,
      raw_json_sql_list_p99_ms: jsonSql.p99,
      hub_over_raw_json_sql_p99: Number((hub.p99 / jsonSql.p99).toFixed(2)),
      hub_list_cpu_ms: hub.cpuMs,
      raw_sql_list_cpu_ms: sql.cpuMs,
      raw_json_sql_list_cpu_ms: jsonSql.cpuMs,
      hub_over_raw_sql_cpu: Number((hub.cpuMs.total / sql.cpuMs.total).toFixed(2)),
      hub_list_generated_client_p50_ms: viaClient.p50,
      hub_list_generated_client_p99_ms: viaClient.p99,
      hub_list_generated_client_cpu_ms: viaClient.cpuMs,
      hub_list_requests: hub.requests,
      raw_sql_list_requests: sql.requests,
      errors: hub.errors + viaClient.errors + sql.errors + jsonSql.errors,
      concurrent_clients: clients,
      pool_size: poolSize,
      rounds,
    };
  } finally {
    await http.close();
    await raw.end();
    await stack.close();
  }
}

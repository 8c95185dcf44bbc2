import pg from 'pg';
import { createFleetClient, unwrap } from '@fleet/client';
import { deviceJsonListStatement, deviceListQuery, pgDialect } from '@fleet/db';
import { startSeededHub } from './lib/seeded-hub.js';

/** As bench/inventory.ts: 20 concurrent clients, a hub database pool of 20. */
const clients = 20;
const poolSize = 20;
/** The question bench/inventory.ts asks: compute trays of one site, a page of 100. */
const query = { site_id: ['site-02'], role: ['compute-tray'], limit: 100 };

/**
 * The hub's filtered device page under 20 concurrent clients, against the very statement the hub runs for it
 * (built by the same repository function) sent raw over `pg` with a pool of the hub's size at the same concurrency,
 * in the same run: what the hub adds on top of Postgres shows as `hub_over_raw_sql_p99`. The baseline is the plain
 * page select (listDevices); the hub wraps it so that Postgres also writes each device's JSON, and that whole
 * statement raw is `raw_json_sql_list_*`.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const count = Number(args[0] ?? 10_000);
  const requests = Number(args[1] ?? 2000);
  const rounds = Number(args[2] ?? 1);
  const stack = await startSeededHub({ name: 'hub-list', devices: count, role: 'viewer', poolSize });
  const raw = new pg.Pool({ connectionString: stack.db.$client.options.connectionString, max: poolSize });
  try {
    const api = createFleetClient({ baseUrl: stack.url, token: stack.token });
    const hubPage = async () => (await unwrap(api.GET('/v1/devices', { params: { query } }))).items.length;

    // The route asks for one row more than the page to know whether a next page exists.
    const statement = deviceListQuery(stack.db, {
      limit: query.limit + 1,
      sort: 'name',
      filters: { siteId: query.site_id, role: query.role },
    }).toSQL();
    const rawPage = async () => Math.min(query.limit, (await raw.query(statement.sql, statement.params)).rows.length);
    // And the hub's whole statement: that page with each device written as its API JSON by Postgres.
    const json = pgDialect.sqlToQuery(
      deviceJsonListStatement(
        stack.db,
        { limit: query.limit + 1, sort: 'name', filters: { siteId: query.site_id, role: query.role } },
        'netbox',
      ),
    );
    const jsonPage = async () => Math.min(query.limit, (await raw.query(json.sql, json.params)).rows.length);

    await load('hub warm-up', hubPage, 100);
    await load('raw warm-up', rawPage, 100);
    await load('raw JSON warm-up', jsonPage, 100);
    // Alternating rounds keep both sides under the same machine load when others share it.
    const hubTimes: number[] = [];
    const rawTimes: number[] = [];
    const jsonTimes: number[] = [];
    let errors = 0;
    for (let i = 0; i < rounds; i++) {
      const h = await load('hub', hubPage, Math.ceil(requests / rounds));
      const r = await load('raw SQL', rawPage, Math.ceil(requests / rounds));
      const j = await load('raw JSON SQL', jsonPage, Math.ceil(requests / rounds));
      hubTimes.push(...h.times);
      rawTimes.push(...r.times);
      jsonTimes.push(...j.times);
      errors += h.errors + r.errors + j.errors;
    }
    const hub = stats(hubTimes);
    const sql = stats(rawTimes);
    const jsonSql = stats(jsonTimes);
    return {
      devices: count,
      hub_list_p50_ms: hub.p50,
      hub_list_p99_ms: hub.p99,
      raw_sql_list_p50_ms: sql.p50,
      raw_sql_list_p99_ms: sql.p99,
      hub_over_raw_sql_p99: Number((hub.p99 / sql.p99).toFixed(2)),
      raw_json_sql_list_p50_ms: jsonSql.p50,
      raw_json_sql_list_p99_ms: jsonSql.p99,
      hub_list_requests: hubTimes.length,
      raw_sql_list_requests: rawTimes.length,
      errors,
      concurrent_clients: clients,
      pool_size: poolSize,
    };
  } finally {
    await raw.end();
    await stack.close();
  }
}

/** `total` requests from `clients` concurrent workers; `page` answers one with its item count, throwing on failure. */
export async function load(
  what: string,
  page: () => Promise<number>,
  total: number,
): Promise<{ times: number[]; errors: number }> {
  const times: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: unknown;
  const worker = async () => {
    while (next < total) {
      next++;
      const t = performance.now();
      try {
        const n = await page();
        if (n !== query.limit) throw new Error(`${what}: ${n} items, not ${query.limit}`);
        times.push(performance.now() - t);
      } catch (err) {
        firstError ??= err;
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  if (times.length === 0) throw new Error(`${what}: every request failed`, { cause: firstError });
  return { times, errors };
}

function stats(times: number[]): { p50: number; p99: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const pct = (p: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(1));
  return { p50: pct(0.5), p99: pct(0.99) };
}

import type pg from 'pg';
import { processCpu } from './process-cpu.js';

/** One way of asking for the same page: it answers a request with the page's item count, throwing on failure. */
export interface PageSide {
  what: string;
  page: () => Promise<number>;
  /** Server processes whose CPU the side's requests cost (the hub, its replicas), by the names their figures take. */
  servers?: readonly { name: string; pid: number }[];
}

/** A side's requests: latency percentiles, and CPU ms per request by process (`client` is this process). */
export interface SideFigures {
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  cpuMs: Record<string, number> & { total: number };
}

/**
 * `requests` requests per side from `clients` concurrent workers, in `rounds` that take the sides in turn so that
 * each runs under the same machine load when others share it. Before each round a warm-up fills the pools; the
 * Postgres backends serving `database` then are the ones whose CPU counts (read through `admin`, a connection to
 * it, on a server on this machine).
 */
export async function compareSides<const S extends readonly PageSide[]>(
  sides: S,
  options: { requests: number; rounds: number; clients: number; expected: number; admin: pg.Pool; database: string },
): Promise<{ [K in keyof S]: SideFigures }> {
  const { rounds, clients, expected, admin, database } = options;
  const runs = sides.map(() => ({ times: [] as number[], cpuS: new Map<string, number>(), errors: 0 }));
  for (let i = 0; i < rounds; i++) {
    for (const [k, side] of sides.entries()) {
      await load(`${side.what} warm-up`, side.page, 5 * clients, clients, expected);
      const backends = await admin.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database],
      );
      const cpu = processCpu({
        client: { pid: process.pid },
        ...Object.fromEntries((side.servers ?? []).map((s) => [s.name, s.pid])),
        ...Object.fromEntries(backends.rows.map((b) => [`postgres ${b.pid}`, { pid: b.pid }])),
      });
      const r = await load(side.what, side.page, Math.ceil(options.requests / rounds), clients, expected);
      const run = runs[k]!;
      for (const [source, s] of Object.entries(cpu.stop())) {
        const key = source.startsWith('postgres') ? 'postgres' : source;
        run.cpuS.set(key, (run.cpuS.get(key) ?? 0) + s);
      }
      run.times.push(...r.times);
      run.errors += r.errors;
    }
  }
  const figures = runs.map((r): SideFigures => {
    const requests = r.times.length + r.errors;
    const ms = (s: number) => Number(((s * 1000) / requests).toFixed(3));
    const total = [...r.cpuS.values()].reduce((a, b) => a + b, 0);
    const cpuMs = { ...Object.fromEntries([...r.cpuS].map(([k, s]) => [k, ms(s)])), total: ms(total) };
    return { ...percentiles(r.times), requests: r.times.length, errors: r.errors, cpuMs };
  });
  return figures as { [K in keyof S]: SideFigures };
}

/**
 * `total` requests from `clients` concurrent workers, each expected to answer `expected` items. A failed or short
 * answer is counted, not timed; a run where every request failed throws the first failure.
 */
export async function load(
  what: string,
  page: () => Promise<number>,
  total: number,
  clients: number,
  expected: number,
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
        if (n !== expected) throw new Error(`${what}: ${n} items, not ${expected}`);
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

export function percentiles(times: number[]): { p50: number; p99: number } {
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

/** The `p` quantile (0..1) of `values`, nearest rank, to one decimal. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(1));
}

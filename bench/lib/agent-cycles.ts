import { promValue } from './prom-text.js';

/** The reconcile histogram's bucket bounds (prom-client's defaults), seconds. */
const bounds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const kinds = ['quick', 'sweep'] as const;

interface Snapshot {
  byKind: Record<string, { count: number; sum: number; buckets: number[] }>;
  workflows: number;
  lists: number;
  sweepFoundEnds: number;
  lookbackS: number;
}

async function snapshot(metricsUrl: string): Promise<Snapshot> {
  const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) })).text();
  const series = (name: string, kind: string, le?: number) =>
    promValue(text, `fleet_agent_reconcile_seconds_${name}{${le === undefined ? '' : `le="${le}",`}kind="${kind}"}`);
  return {
    byKind: Object.fromEntries(
      kinds.map((k) => [
        k,
        { count: series('count', k), sum: series('sum', k), buckets: bounds.map((b) => series('bucket', k, b)) },
      ]),
    ),
    workflows: promValue(text, 'fleet_agent_reconciled_workflows_total'),
    lists: promValue(text, 'fleet_agent_temporal_calls_total{op="list"}'),
    sweepFoundEnds: promValue(text, 'fleet_agent_sweep_found_ends_total'),
    lookbackS: promValue(text, 'fleet_agent_projection_lookback_seconds'),
  };
}

/**
 * The workflow agent's reconcile cycles between start() and stop(), from its metrics: per kind (quick cycles, and the
 * sweep's steps beside them) how many and how long (mean, and the share over 1, 5 and 10 s), and what all of them read
 * from Temporal's visibility. What the projection lag is made of: a job's close reaches Postgres once a quick cycle
 * that starts after it (less the visibility lag) ends.
 */
export async function agentCycles(metricsUrl: string) {
  const before = await snapshot(metricsUrl);
  // The lookback moves with visibility's delay: its largest value is sampled as the phase runs.
  let lookbackMaxS = before.lookbackS;
  const sampler = setInterval(() => {
    snapshot(metricsUrl).then(
      (s) => (lookbackMaxS = Math.max(lookbackMaxS, s.lookbackS)),
      () => undefined,
    );
  }, 2000).unref();
  return {
    async stop() {
      clearInterval(sampler);
      const after = await snapshot(metricsUrl);
      const round = (n: number) => Number(n.toFixed(2));
      const perKind = Object.fromEntries(
        kinds.map((k) => {
          const [a, b] = [after.byKind[k]!, before.byKind[k]!];
          const cycles = a.count - b.count;
          const within = (limit: number) => a.buckets[bounds.indexOf(limit)]! - b.buckets[bounds.indexOf(limit)]!;
          const over = (limit: number) => (cycles ? round(1 - within(limit) / cycles) : 0);
          return [
            k,
            {
              cycles,
              mean_s: cycles ? round((a.sum - b.sum) / cycles) : 0,
              share_over_1_s: over(1),
              share_over_5_s: over(5),
              share_over_10_s: over(10),
            },
          ];
        }),
      );
      const all = kinds.reduce((n, k) => n + (perKind[k]!.cycles as number), 0);
      return {
        ...perKind,
        workflows_listed_per_cycle: all ? round((after.workflows - before.workflows) / all) : 0,
        visibility_calls_per_cycle: all ? round((after.lists - before.lists) / all) : 0,
        // Ends only a sweep wrote (visibility showed them after the quick window had passed), and the quick
        // cycles' lookback: its largest value (sampled every 2 s) and its value at the end.
        sweep_found_ends: after.sweepFoundEnds - before.sweepFoundEnds,
        lookback_s_max: round(Math.max(lookbackMaxS, after.lookbackS)),
        lookback_s_at_end: round(after.lookbackS),
      };
    },
  };
}

import { unwrap } from '@fleet/client';
import { Stack } from '../test/harness/stack.js';
import { prepareStackBench } from './lib/environment.js';

/**
 * 200 power-on jobs over 200 simulated BMCs through the whole stack (hub, agent,
 * Temporal, satellite, simulator as real processes). Latency is intent to projected
 * success, read from Postgres: the job's created_at to the moment the agent wrote
 * its terminal state (updated_at).
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const jobs = Number(args[0] ?? 200);
  const cleanup = await prepareStackBench('skeleton');

  // Simulated power-on: 30 s scaled by 0.01 = 0.3 s per tray.
  const baselineJobs = 5;
  const stack = new Stack({
    bmcs: jobs + baselineJobs,
    timeScale: 0.01,
    projectionIntervalMs: 200,
    pollIntervalMs: 100,
  });
  await stack.start();
  try {
    const metrics = async () => {
      const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort(stack.agent)}/metrics`)).text();
      const read = (re: RegExp) => Number(text.match(re)?.[1] ?? 0);
      return {
        listCalls: read(/fleet_agent_temporal_calls_total\{op="list"\} (\d+)/),
        busyCycles: read(/fleet_agent_reconcile_busy_cycles_total (\d+)/),
        workflows: read(/fleet_agent_reconciled_workflows_total (\d+)/),
      };
    };
    const operator = stack.client('operator');
    const powerOn = async (id: string) =>
      (await unwrap(operator.POST('/v1/devices/{id}/power', { params: { path: { id } }, body: { action: 'on' } }))).id;
    const allIds = [...stack.deviceIds.values()];
    // Baseline in the same run: one job at a time on an idle stack.
    const baseline: number[] = [];
    for (const id of allIds.slice(0, baselineJobs)) {
      const jobId = await powerOn(id);
      await stack.waitForJob(jobId);
      const { rows } = await stack.dbHandle.pool.query<{ ms: number }>(
        `select extract(epoch from (updated_at - created_at)) * 1000 as ms from jobs where id = $1`,
        [jobId],
      );
      baseline.push(Number(rows[0]!.ms));
    }
    baseline.sort((a, b) => a - b);
    const baselineIds = new Set<string>();
    for (const id of allIds.slice(0, baselineJobs)) baselineIds.add(id);
    const before = await metrics();
    const ids = allIds.slice(baselineJobs);
    const started = Date.now();
    const jobIds: string[] = [];
    for (let i = 0; i < ids.length; i += 20) {
      jobIds.push(...(await Promise.all(ids.slice(i, i + 20).map(powerOn))));
    }
    const deadline = Date.now() + 300_000;
    for (;;) {
      const { rows } = await stack.dbHandle.pool.query<{ open: number; failed: number }>(
        `select count(*) filter (where state not in ('succeeded','failed','cancelled'))::int as open,
                count(*) filter (where state = 'failed')::int as failed from jobs`,
      );
      if (rows[0]!.open === 0) {
        if (rows[0]!.failed > 0) throw new Error(`${rows[0]!.failed} jobs failed`);
        break;
      }
      if (Date.now() > deadline) throw new Error(`${rows[0]!.open} jobs still open after 300 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const wall = (Date.now() - started) / 1000;
    const after = await metrics();
    const { rows } = await stack.dbHandle.pool.query<{ ms: number }>(
      `select extract(epoch from (updated_at - created_at)) * 1000 as ms from jobs where state = ` +
        `'succeeded' and not (device_id = any($1::uuid[])) order by 1`,
      [[...baselineIds]],
    );
    const ms = rows.map((r) => Number(r.ms));
    const pct = (p: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))]!);
    const cycles = after.busyCycles - before.busyCycles;
    return {
      jobs: ms.length,
      single_job_p50_ms: Math.round(baseline[Math.floor(baseline.length / 2)]!),
      p50_ms: pct(50),
      p95_ms: pct(95),
      max_ms: Math.round(ms[ms.length - 1]!),
      jobs_per_s: Number((ms.length / wall).toFixed(1)),
      temporal_calls_per_reconcile_cycle: Number(((after.listCalls - before.listCalls) / cycles).toFixed(2)),
      workflows_per_reconcile_cycle: Number(((after.workflows - before.workflows) / cycles).toFixed(1)),
      reconcile_cycles: cycles,
      simulated_power_on_s: 0.3,
    };
  } finally {
    await stack.stop();
    await cleanup();
  }
}

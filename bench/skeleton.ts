import { Client, Connection } from '@temporalio/client';
import { unwrap } from '@fleet/client';
import { Stack } from '../test/harness/stack.js';
import { bmcRequests } from './lib/bmc-requests.js';
import { prepareStackBench } from './lib/environment.js';
import { settleWaitArg } from './lib/settle-wait.js';
import { jobStages, medianStages } from './lib/job-timeline.js';
import { processCpu } from './lib/process-cpu.js';
import { trivialBurst } from './lib/trivial-burst.js';

/**
 * 200 power-on jobs over 200 simulated BMCs through the whole stack (hub, agent,
 * Temporal, satellite, simulator as real processes). Latency is intent to projected
 * success, read from Postgres: the job's created_at to the moment the agent wrote
 * its terminal state (updated_at). The baseline in the same run is a burst of trivial
 * workflows (one activity that waits the simulated power-on) on the same dev server;
 * each job's latency is split into stages from its workflow history after the measurement.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const jobs = Number(args[0] ?? 200);
  const settleWait = settleWaitArg(args[1]);
  const cleanup = await prepareStackBench('skeleton');

  // Simulated power-on: 30 s scaled by 0.01 = 0.3 s per tray.
  const timeScale = 0.01;
  const simulatedMs = 30_000 * timeScale;
  const baselineJobs = 9;
  const stack = new Stack({
    // Measured as the trivial-workflow baseline runs: no codec; no leak scan of thousands of histories at the end.
    payloadEncryption: false,
    leakScan: false,
    // Many concurrent pollers share one token: the bench measures the stack, not the rate limit.
    rateLimit: { enabled: false },
    bmcs: jobs + baselineJobs,
    timeScale,
    // A quick projection cycle costs one Temporal call whatever the number of jobs, and lists only what changed.
    projectionIntervalMs: 50,
    // Scaled with the device: a 2 s poll against a 30 s power-on is 20 ms against 0.3 s.
    pollIntervalMs: 20,
    ...settleWait.stack,
  });
  await stack.start();
  const connection = await Connection.connect({ address: stack.temporal.address });
  const temporal = new Client({ connection });
  try {
    const metrics = async () => {
      const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort(stack.agent)}/metrics`)).text();
      const read = (re: RegExp) => Number(text.match(re)?.[1] ?? 0);
      // A histogram's series summed over its labels (the reconcile cycles carry their kind).
      const total = (series: string) =>
        [...text.matchAll(new RegExp(`^${series}(?:\\{[^}]*\\})? ([\\d.e+-]+)$`, 'gm'))].reduce(
          (n, m) => n + Number(m[1]),
          0,
        );
      return {
        listCalls: read(/fleet_agent_temporal_calls_total\{op="list"\} (\d+)/),
        startCalls: read(/fleet_agent_temporal_calls_total\{op="start"\} (\d+)/),
        busyCycles: read(/fleet_agent_reconcile_busy_cycles_total (\d+)/),
        workflows: read(/fleet_agent_reconciled_workflows_total (\d+)/),
        histograms: Object.fromEntries(
          ['start', 'intent_wait', 'reconcile'].map((h) => [
            h,
            {
              sum: total(`fleet_agent_${h}_seconds_sum`),
              count: total(`fleet_agent_${h}_seconds_count`),
            },
          ]),
        ) as Record<string, { sum: number; count: number }>,
      };
    };
    const operator = stack.client('operator');
    const powerOn = async (id: string) =>
      (await unwrap(operator.POST('/v1/devices/{id}/power', { params: { path: { id } }, body: { action: 'on' } }))).id;
    const allIds = [...stack.deviceIds.values()];
    const trivialCpu = processCpu({ temporal: stack.temporal.process.pid!, bench: { pid: process.pid } });
    // Its activity holds the simulated power-on, as the jobs' devices do: the ratio is of what each adds to that.
    const trivial = await trivialBurst(stack.temporal.address, jobs, simulatedMs);
    const trivialCpuS = trivialCpu.stop();
    // One job at a time on an idle stack.
    const baseline: number[] = [];
    const singleIds: string[] = [];
    for (const id of allIds.slice(0, baselineJobs)) {
      const jobId = await powerOn(id);
      await stack.waitForJob(jobId);
      const { rows } = await stack.dbHandle.pool.query<{ ms: number }>(
        `select extract(epoch from (updated_at - created_at)) * 1000 as ms from jobs where id = $1`,
        [jobId],
      );
      baseline.push(Number(rows[0]!.ms));
      singleIds.push(jobId);
    }
    baseline.sort((a, b) => a - b);
    const baselineIds = new Set<string>();
    for (const id of allIds.slice(0, baselineJobs)) baselineIds.add(id);
    const before = await metrics();
    const cpu = processCpu({
      hub: stack.hub.pid!,
      agent: stack.agent.pid!,
      satellite: stack.satellite.pid!,
      simulator: stack.simulator.pid!,
      temporal: stack.temporal.process.pid!,
      postgres: { comm: 'postgres' },
      bench: { pid: process.pid },
    });
    const ids = allIds.slice(baselineJobs);
    const requestsBefore = await bmcRequests(stack);
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
    const burstCpuS = cpu.stop();
    const requests = (await bmcRequests(stack)) - requestsBefore;
    const after = await metrics();
    const { rows } = await stack.dbHandle.pool.query<{ id: string; ms: number; created_at: Date; updated_at: Date }>(
      `select id, extract(epoch from (updated_at - created_at)) * 1000 as ms, created_at, updated_at from jobs ` +
        `where state = 'succeeded' and not (device_id = any($1::uuid[])) order by 2`,
      [[...baselineIds]],
    );
    const ms = rows.map((r) => Number(r.ms));
    const stagesOf = async (ids: string[]) => {
      const { rows: timed } = await stack.dbHandle.pool.query<{ id: string; created_at: Date; updated_at: Date }>(
        `select id, created_at, updated_at from jobs where id = any($1::uuid[])`,
        [ids],
      );
      return medianStages(
        await jobStages(
          temporal,
          timed.map((r) => ({ id: r.id, createdAt: r.created_at, updatedAt: r.updated_at })),
        ),
      );
    };
    const singleStages = await stagesOf(singleIds);
    const burstStages = await stagesOf(rows.map((r) => r.id));
    const pct = (p: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))]!);
    const cycles = after.busyCycles - before.busyCycles;
    /** The burst's mean of an agent histogram, in ms. */
    const meanMs = (h: string) => {
      const [a, b] = [after.histograms[h]!, before.histograms[h]!];
      return Math.round(((a.sum - b.sum) / Math.max(1, a.count - b.count)) * 1000);
    };
    const singleP50 = Math.round(baseline[Math.floor(baseline.length / 2)]!);
    return {
      jobs: ms.length,
      single_job_p50_ms: singleP50,
      single_job_overhead_ms: singleP50 - simulatedMs,
      single_job_stages_p50_ms: singleStages,
      p50_ms: pct(50),
      p95_ms: pct(95),
      max_ms: Math.round(ms[ms.length - 1]!),
      burst_stages_p50_ms: burstStages,
      baseline_burst_p50_ms: trivial.p50Ms,
      baseline_burst_p95_ms: trivial.p95Ms,
      baseline_burst_stages_p50_ms: trivial.stagesP50Ms,
      burst_p95_ratio: Number((pct(95) / trivial.p95Ms).toFixed(2)),
      jobs_per_s: Number((ms.length / wall).toFixed(1)),
      temporal_calls_per_reconcile_cycle: Number(((after.listCalls - before.listCalls) / cycles).toFixed(2)),
      // The agent's Temporal calls per burst job (start + its share of the listings) and workflows read per job.
      agent_temporal_calls_per_job: Number(
        ((after.listCalls - before.listCalls + after.startCalls - before.startCalls) / ms.length).toFixed(2),
      ),
      workflows_listed_per_job: Number(((after.workflows - before.workflows) / ms.length).toFixed(1)),
      workflows_per_reconcile_cycle: Number(((after.workflows - before.workflows) / cycles).toFixed(1)),
      reconcile_cycles: cycles,
      agent_mean_ms: { start_call: meanMs('start'), intent_wait: meanMs('intent_wait'), cycle: meanMs('reconcile') },
      simulated_power_on_s: simulatedMs / 1000,
      // Each job reads the state, sends the reset, then polls every 20 ms until the tray is on.
      redfish_requests_per_job: Number((requests / ms.length).toFixed(1)),
      settle_wait_fraction: settleWait.figure,
      // CPU seconds each process spent from the first post to the last job's end (Postgres: every backend).
      burst_cpu_s: burstCpuS,
      burst_wall_s: Number(wall.toFixed(2)),
      // The baseline's burst: the dev server, and the bench process that runs its worker and client.
      baseline_burst_cpu_s: trivialCpuS,
    };
  } finally {
    await connection.close();
    await stack.stop();
    await cleanup();
  }
}

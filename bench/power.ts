import { Client, Connection } from '@temporalio/client';
import { unwrap } from '@fleet/client';
import { Stack } from '../test/harness/stack.js';
import { bmcRequests } from './lib/bmc-requests.js';
import { prepareStackBench } from './lib/environment.js';
import { settleWaitArg } from './lib/settle-wait.js';
import { eventsByType } from './lib/job-timeline.js';

/**
 * Rack power at scale through the whole stack: one cold reboot (makespan against the
 * sum of its floors and simulated waits: the ratio is Fleet's overhead), then N racks
 * powered on at once (ordered sequences running in parallel), and Temporal history per rack.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const racks = Number(args[0] ?? 100);
  const settleWait = settleWaitArg(args[1]);
  const cleanup = await prepareStackBench('power');

  // Simulated delays scaled 100×: a 30 s tray power-on takes 0.3 s, a 120 s BMC boot 1.2 s.
  const timeScale = 0.01;
  const stack = new Stack({
    // Measured as the trivial-workflow baseline runs: no codec; no leak scan of thousands of histories at the end.
    payloadEncryption: false,
    leakScan: false,
    // Many concurrent pollers share one token: the bench measures the stack, not the rate limit.
    rateLimit: { enabled: false },
    racks,
    timeScale,
    projectionIntervalMs: 500,
    pollIntervalMs: 100,
    power: { heartbeatTimeoutS: 10, settleTimeoutS: 300 },
    ...settleWait.stack,
  });
  await stack.start();
  const connection = await Connection.connect({ address: stack.temporal.address });
  const temporal = new Client({ connection });
  try {
    const rackIds = [...stack.rackIds.values()];
    const operator = stack.client('operator');
    const seconds = (job: { created_at: string; finished_at: string }) =>
      (Date.parse(job.finished_at) - Date.parse(job.created_at)) / 1000;

    // One cold reboot with short floors; the gates also wait on simulated BMC boots.
    const timings = {
      prestageShutdownPollMaxS: 120,
      dischargeFloorS: 3,
      dischargePollMaxS: 120,
      bmcUpFloorS: 3,
      bmcUpPollMaxS: 120,
      computeBootWaitS: 3,
      pollIntervalS: 1,
    };
    const sim = { gracefulShutdownS: 20 * timeScale, bmcBootS: 120 * timeScale, powerOnS: 30 * timeScale };
    const floorSum =
      timings.dischargeFloorS +
      timings.bmcUpFloorS +
      timings.computeBootWaitS +
      sim.gracefulShutdownS +
      sim.bmcBootS +
      sim.powerOnS;
    const reboot = await unwrap(
      operator.POST('/v1/racks/{id}/cold-reboot', { params: { path: { id: rackIds[0]! } }, body: { timings } }),
    );
    const rebootDone = (await stack.waitForJob(reboot.id, 600_000)) as {
      state: string;
      created_at: string;
      finished_at: string;
      error: unknown;
    };
    if (rebootDone.state !== 'succeeded')
      throw new Error(`cold reboot ${rebootDone.state}: ${JSON.stringify(rebootDone.error)}`);
    const rebootEvents = (await temporal.workflow.getHandle(reboot.id).describe()).historyLength;

    // Every rack on at once.
    const requestsBefore = await bmcRequests(stack);
    const started = Date.now();
    const jobs = await Promise.all(
      rackIds.map(
        async (id) =>
          (await unwrap(operator.POST('/v1/racks/{id}/power', { params: { path: { id } }, body: { op: 'on' } }))).id,
      ),
    );
    const finished = await Promise.all(
      jobs.map(
        (id) => stack.waitForJob(id, 1_800_000) as Promise<{ state: string; created_at: string; finished_at: string }>,
      ),
    );
    const failed = finished.filter((j) => j.state !== 'succeeded').length;
    if (failed) throw new Error(`${failed} rack power jobs did not succeed`);
    const makespan = (Math.max(...finished.map((j) => Date.parse(j.finished_at))) - started) / 1000;
    const requests = (await bmcRequests(stack)) - requestsBefore;
    const events = await Promise.all(
      jobs.slice(0, 10).map(async (id) => (await temporal.workflow.getHandle(id).describe()).historyLength),
    );
    // Where one rack's events go, by type: the budget's breakdown (workflow tasks vary with how completions batch).
    const byType = eventsByType((await temporal.workflow.getHandle(jobs[0]!).fetchHistory()).events ?? []);

    return {
      cold_reboot_makespan_s: Number(seconds(rebootDone).toFixed(2)),
      cold_reboot_floor_sum_s: Number(floorSum.toFixed(2)),
      cold_reboot_overhead_ratio: Number((seconds(rebootDone) / floorSum).toFixed(2)),
      cold_reboot_history_events: rebootEvents,
      racks,
      devices: racks * 35,
      parallel_rack_power_on_makespan_s: Number(makespan.toFixed(1)),
      redfish_requests_per_device: Number((requests / (racks * 35)).toFixed(1)),
      settle_wait_fraction: settleWait.figure,
      history_events_per_rack: Math.round(events.reduce((a, b) => a + b, 0) / events.length),
      history_events_per_rack_max: Math.max(...events),
      // workflows/README.md "rackPower": per device its activity (3) and at most one workflow task (3); the first task,
      // 4 memos, the patch (2), start and close. Completions that arrive together share a task: about 10 tasks, not 36.
      history_events_per_rack_budget: 35 * 6 + 3 + 4 + 2 + 2,
      history_events_one_rack_by_type: byType,
      simulated_time_scale: timeScale,
    };
  } finally {
    await connection.close();
    await stack.stop();
    await cleanup();
  }
}

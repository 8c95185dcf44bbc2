import { Client, Connection } from '@temporalio/client';
import { unwrap } from '@fleet/client';
import { defaultTimings, profileParts } from '@fleet/simulators';
import { simulatedSite } from '../apps/satellite/src/burn-in/index.js';
import { manifestFor } from '../test/harness/firmware.js';
import { Stack } from '../test/harness/stack.js';
import { prepareStackBench } from './lib/environment.js';

/** Jobs submitted straight to SLURM to measure its pace (the node of tools/slurm/start.sh runs two at a time). */
const FLOOR_JOBS = 20;

/**
 * Rack enrolment at scale through the whole stack: N NVL72 racks enrolled at once (verification, NVLink topology,
 * firmware baseline to a default manifest, burn-in on the real single-node SLURM, certified), against the lower bound
 * of their simulated stage floors on the critical path with the same caps (the flash and BMC reboot times of the
 * baseline; for the burn-in's jobs, the pace of the SLURM node itself, measured in the same run by jobs submitted
 * straight to it). History events per device count the enrolments' histories and their child
 * firmware updates'.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const racks = Number(args[0] ?? 10);
  const cleanup = await prepareStackBench('enrol');
  const timeScale = 0.01;
  const firmware = {
    taskPollS: 0.5,
    pushDelayS: 0.5,
    acStabilizeS: 0.5,
    powerStateTimeoutS: 300,
    bmcRecoveryS: 600,
    taskTimeoutS: 1200,
  };
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
    power: { heartbeatTimeoutS: 60, settleTimeoutS: 600 },
    firmware,
    burnIn: { startDeadlineS: 7200, pollIntervalMs: 500 },
    enrolment: { burnInHeartbeatTimeoutS: 60 },
  });
  await stack.start();
  const connection = await Connection.connect({ address: stack.temporal.address });
  const temporal = new Client({ connection });
  try {
    await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.11.0', { isDefault: true });
    // Twenty jobs straight to SLURM: the node's own pace, the floor the burn-in's 370 jobs cannot beat.
    const perJobS = await slurmSecondsPerJob(stack, FLOOR_JOBS);

    const rackIds = [...stack.rackIds.values()];
    const started = Date.now();
    const jobs = await Promise.all(
      rackIds.map(
        async (id) =>
          (await unwrap(stack.client('operator').POST('/v1/racks/{id}/enrol', { params: { path: { id } } }))).id,
      ),
    );
    const finished = await Promise.all(
      jobs.map(
        (id) => stack.waitForJob(id, 3_600_000) as Promise<{ state: string; finished_at: string; error: unknown }>,
      ),
    );
    const failed = finished.filter((j) => j.state !== 'succeeded');
    if (failed.length) throw new Error(`${failed.length} enrolments did not succeed: ${JSON.stringify(failed[0])}`);
    const makespan = (Math.max(...finished.map((j) => Date.parse(j.finished_at))) - started) / 1000;

    // The critical path's floors: a compute tray's baseline (each package's flash, the delay between pushes, the
    // BMC reboot that activates them, the stabilisation; the host is off, so no shutdown or power-on), a host's
    // power-on, then every burn-in job at the SLURM node's own pace.
    const parts = profileParts('gb200-compute').length;
    const t = defaultTimings;
    const firmwareFloorS =
      parts * t.firmwareUpdateS * timeScale +
      (parts - 1) * firmware.pushDelayS +
      t.bmcRebootS * timeScale +
      firmware.acStabilizeS;
    const slurmJobs = racks * (18 * 2 + 1);
    const burnInFloorS = t.powerOnS * timeScale + slurmJobs * perJobS;
    const lowerBound = firmwareFloorS + burnInFloorS;

    let events = 0;
    for (const id of jobs) events += (await temporal.workflow.getHandle(id).describe()).historyLength;
    for await (const wf of temporal.workflow.list({ query: `FleetJobKind = 'device.firmware_update'`, pageSize: 500 }))
      events += wf.historyLength ?? 0;
    const submitted = await stack.slurm!.client.listJobs();
    const devices = racks * 35;
    return {
      racks,
      devices,
      enrol_makespan_s: Number(makespan.toFixed(1)),
      lower_bound_s: Number(lowerBound.toFixed(1)),
      makespan_over_lower_bound: Number((makespan / lowerBound).toFixed(2)),
      history_events_per_device: Number((events / devices).toFixed(1)),
      slurm_jobs: submitted.filter((j) => j.name.startsWith('fleet-burnin.')).length,
      slurm_jobs_expected: slurmJobs,
      slurm_seconds_per_job_at_capacity: Number(perJobS.toFixed(3)),
      firmware_floor_s: Number(firmwareFloorS.toFixed(2)),
      burn_in_floor_s: Number(burnInFloorS.toFixed(1)),
      simulated_time_scale: timeScale,
    };
  } finally {
    await connection.close();
    await stack.stop();
    await cleanup();
  }
}

/**
 * What the SLURM node itself gives, without Fleet: a batch of the simulated site's test jobs (a tray's gpu_stress
 * each) submitted at once straight to slurmrestd and followed with one listing every 50 ms, on the idle cluster.
 * Returns the seconds per job at the node's capacity (both slots busy): the burn-in's floor per job.
 */
async function slurmSecondsPerJob(stack: Stack, jobs: number): Promise<number> {
  const cluster = stack.slurm!;
  const site = simulatedSite({ simulatorUrl: stack.simAdminUrl, jobPath: '/usr/local/bin:/usr/bin:/bin' });
  const trays = [...stack.deviceIds.keys()].filter((n) => /-ct\d+$/.test(n));
  const started = performance.now();
  const ids = new Set<number>();
  for (let i = 0; i < jobs; i++) {
    const tray = trays[i % trays.length]!;
    const rendered = site.render({
      name: `floor-${i}`,
      test: 'gpu_stress',
      scope: 'tray',
      trays: [{ deviceId: tray, name: tray }],
    });
    ids.add(
      await cluster.client.submit({
        name: `fleet-bench-floor-${i}`,
        script: rendered.script,
        environment: rendered.environment,
        partition: cluster.partition,
        cwd: cluster.jobsDir,
        stdout: `${cluster.jobsDir}/floor-%j.out`,
        timeLimitMinutes: 5,
      }),
    );
  }
  for (;;) {
    const open = (await cluster.client.listJobs()).filter((j) => ids.has(j.id) && !j.finished);
    if (open.length === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return (performance.now() - started) / 1000 / jobs;
}

import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { unwrap } from '@fleet/client';
import { defaultTimings, profileParts } from '@fleet/simulators';
import { BurnInAdapter, simulatedSite } from '../apps/satellite/src/burn-in/index.js';
import { manifestFor } from '../test/harness/firmware.js';
import { Stack } from '../test/harness/stack.js';
import { prepareStackBench } from './lib/environment.js';

/** The 2-CPU node of tools/slurm/start.sh runs two jobs at a time. */
const SLURM_SLOTS = 2;

/**
 * Rack enrolment at scale through the whole stack: N NVL72 racks enrolled at once (verification, NVLink topology,
 * firmware baseline to a default manifest, burn-in on the real single-node SLURM, certified), against the lower bound
 * of their simulated stage floors on the critical path with the same caps (the flash and BMC reboot times of the
 * baseline; the SLURM node's two job slots for the burn-in's jobs, each as long as one job takes alone on the idle
 * cluster, measured in the same run). History events per device count the enrolments' histories and their child
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
    const jobFloorS = await oneJobAloneS(stack);

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
    // BMC reboot that activates them, the stabilisation; the host is off, so no shutdown or power-on), then every
    // burn-in job through the node's two slots, each as long as one job alone.
    const parts = profileParts('gb200-compute').length;
    const t = defaultTimings;
    const firmwareFloorS =
      parts * t.firmwareUpdateS * timeScale +
      (parts - 1) * firmware.pushDelayS +
      t.bmcRebootS * timeScale +
      firmware.acStabilizeS;
    const slurmJobs = racks * (18 * 2 + 1);
    const burnInFloorS = t.powerOnS * timeScale + Math.ceil(slurmJobs / SLURM_SLOTS) * jobFloorS;
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
      slurm_jobs: submitted.length - 1,
      slurm_jobs_expected: slurmJobs,
      slurm_job_alone_s: Number(jobFloorS.toFixed(2)),
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

/** One burn-in job (a tray's gpu_stress) on the idle cluster, submit to verdict: the per-job floor. */
async function oneJobAloneS(stack: Stack): Promise<number> {
  const cluster = stack.slurm!;
  const adapter = new BurnInAdapter({
    slurm: cluster.client,
    partition: cluster.partition,
    outputDir: cluster.jobsDir,
    site: simulatedSite({ simulatorUrl: stack.simAdminUrl, jobPath: '/usr/local/bin:/usr/bin:/bin' }),
    timeLimitsMin: { gpu_stress: 5, memory: 5, nvlink_allreduce: 5 },
    startDeadlineS: 300,
    overrunGraceS: 60,
    pollIntervalMs: 50,
    log: pino({ level: 'silent' }),
  });
  const tray = [...stack.deviceIds.keys()].find((n) => n.endsWith('-ct01'))!;
  const started = performance.now();
  await adapter.run(
    { jobId: randomUUID(), attempt: 1, trays: [{ deviceId: 'floor', name: tray }], tests: ['gpu_stress'] },
    {
      signal: AbortSignal.timeout(300_000),
      onProgress: () => {},
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    },
  );
  return (performance.now() - started) / 1000;
}

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ActivityCancellationDetails, CancelledFailure } from '@temporalio/common';
import type { MockActivityEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import { startTestCluster, type TestCluster } from '../../../packages/slurm/test/cluster.js';
import { createBurnInActivities } from '../src/activities/burn-in.js';
import type { BurnInInput, BurnInResult, BurnInTest } from '@fleet/domain';
import {
  BurnInAdapter,
  simulatedSite,
  type BurnInProgress,
  type PlannedJob,
  type RenderedJob,
} from '../src/burn-in/index.js';
import { startTraySim, type TraySim } from './burn-in-helpers.js';
import { mockEnv, sleep } from './helpers/devices.js';

type Activities = ReturnType<typeof createBurnInActivities>;

// runBurnIn against a real single-node SLURM (slurmrestd, slurmctld, slurmd) and the real BMC simulator: the jobs
// really run the simulated site's scripts, which ask the simulator for their tray's health. Nine jobs in all.
describe('runBurnIn on SLURM', () => {
  let cluster: TestCluster;
  let sim: TraySim;
  let activities: Activities;
  /** The same, giving up on a PENDING job after 3 s (the queue of this 2-CPU node makes others wait longer). */
  let impatient: Activities;
  /** Submitting to a partition the cluster does not have. */
  let misconfigured: Activities;
  /** A test's replacement for the site's script, for some jobs. */
  let override: ((job: PlannedJob) => string | undefined) | undefined;

  before(async () => {
    [cluster, sim] = await Promise.all([
      startTestCluster(),
      startTraySim([{ id: 'ct01' }, { id: 'ct02' }, { id: 'ct03' }]),
    ]);
    const site = simulatedSite({ simulatorUrl: sim.adminUrl, jobPath: '/usr/local/bin:/usr/bin:/bin' });
    const silent = pino({ level: 'silent' });
    const make = (startDeadlineS: number, partition = cluster.partition) =>
      createBurnInActivities({
        adapter: new BurnInAdapter({
          slurm: cluster.client,
          partition,
          outputDir: cluster.jobsDir,
          site: {
            render: (job): RenderedJob => {
              const rendered = site.render(job);
              const script = override?.(job);
              return script === undefined ? rendered : { ...rendered, script };
            },
          },
          timeLimitsMin: { gpu_stress: 1, memory: 1, nvlink_allreduce: 1 },
          startDeadlineS,
          overrunGraceS: 60,
          pollIntervalMs: 200,
          log: silent,
        }),
        log: silent,
      });
    activities = make(60);
    impatient = make(3);
    misconfigured = make(60, 'no-such-partition');
  });
  after(async () => {
    await Promise.all([cluster?.stop(), sim?.close()]);
  });

  /** MockActivityEnvironment.run does not infer the result type. */
  const run = (env: MockActivityEnvironment, acts: Activities, job: BurnInInput) =>
    env.run(acts.runBurnIn, job) as Promise<BurnInResult>;
  const tray = (name: string) => ({ deviceId: `dev-${name}`, name });
  const input = (trays: string[], tests: BurnInTest[]): BurnInInput => ({
    jobId: randomUUID(),
    attempt: 1,
    rackId: 'r001',
    trays: trays.map(tray),
    tests,
  });
  const jobsOf = async (jobId: string) =>
    (await cluster.client.listJobs()).filter((j) => j.name.startsWith(`fleet-burnin.${jobId}.`));
  const table = (r: BurnInResult) => r.verdicts.map((v) => [v.deviceId, v.test, v.verdict, v.reason, v.message]);

  it('a healthy tray passes all three tests; a GPU fault on the other fails exactly its gpu_stress', async () => {
    await sim.injectFault('ct02', { part: 'gpu', gpu: 2, reason: 'XID 79' });
    const job = input(['ct01', 'ct02'], ['gpu_stress', 'memory', 'nvlink_allreduce']);
    const result = await run(mockEnv(), activities, job);
    assert.deepEqual(table(result), [
      ['dev-ct01', 'gpu_stress', 'pass', null, 'passed'],
      ['dev-ct01', 'memory', 'pass', null, 'passed'],
      ['dev-ct01', 'nvlink_allreduce', 'pass', null, 'passed'],
      ['dev-ct02', 'gpu_stress', 'fail', 'TestFailed', 'GPU_2: Critical (XID 79)'],
      ['dev-ct02', 'memory', 'pass', null, 'passed'],
      ['dev-ct02', 'nvlink_allreduce', 'pass', null, 'passed'],
    ]);
    assert.equal(result.passed, false);
    const slurmJobs = await jobsOf(job.jobId);
    assert.equal(slurmJobs.length, 5, 'two tray tests on two trays, one rack test');
    assert.ok(slurmJobs.every((j) => j.state === 'COMPLETED'));
    // The rack test is one job whose verdicts name both trays.
    const rack = result.verdicts.filter((v) => v.test === 'nvlink_allreduce');
    assert.equal(rack[0]?.slurmJobId, rack[1]?.slurmJobId);
    await sim.clearFaults('ct02');
  });

  it('garbage output is a failure naming it', async (t) => {
    override = (job) => `#!/bin/bash\necho 'FLEET_BURNIN_RESULT <<garbage>> from ${job.test}'\n`;
    t.after(() => (override = undefined));
    const result = await run(mockEnv(), activities, input(['ct03'], ['gpu_stress']));
    const v = result.verdicts[0]!;
    assert.equal(result.passed, false);
    assert.equal(v.verdict, 'fail');
    assert.equal(v.reason, 'UnparsableResult');
    assert.match(v.message, /result line is not JSON .*<<garbage>> from gpu_stress/);
    assert.equal(v.slurmState, 'COMPLETED');
  });

  it('a job that never starts (partition down) fails NeverStarted with PartitionDown after the deadline', async (t) => {
    cluster.scontrol('update', `PartitionName=${cluster.partition}`, 'State=DOWN');
    t.after(() => cluster.scontrol('update', `PartitionName=${cluster.partition}`, 'State=UP'));
    const job = input(['ct01'], ['memory']);
    const started = Date.now();
    const result = await run(mockEnv(), impatient, job);
    const v = result.verdicts[0]!;
    assert.equal(v.verdict, 'fail');
    assert.equal(v.reason, 'NeverStarted');
    assert.equal(v.slurmState, 'PENDING');
    assert.equal(v.slurmReason, 'PartitionDown');
    assert.match(v.message, /still PENDING \(PartitionDown\) \d+ s after its submission/);
    assert.ok(Date.now() - started >= 2_500, 'waited for the start deadline (3 s)');
    // Given up on, and cancelled so that it cannot run unwatched once the partition is up again.
    const [slurmJob] = await jobsOf(job.jobId);
    assert.equal(slurmJob?.state, 'CANCELLED');
  });

  it('a job SLURM refuses (no such partition) is a SubmitRefused failure, not an error to retry', async () => {
    const job = input(['ct01', 'ct02'], ['nvlink_allreduce']);
    const result = await run(mockEnv(), misconfigured, job);
    assert.equal(result.passed, false);
    assert.deepEqual(
      result.verdicts.map((v) => [v.deviceId, v.reason, v.slurmJobId]),
      [
        ['dev-ct01', 'SubmitRefused', null],
        ['dev-ct02', 'SubmitRefused', null],
      ],
    );
    assert.match(result.verdicts[0]!.message, /Invalid partition name specified \(slurm error 2000\)/);
    assert.equal((await jobsOf(job.jobId)).length, 0);
  });

  it('a retried activity submits nothing: it follows the job by its heartbeat, or finds it by name', async () => {
    // Fleet's ids are UUIDs: a name of the length real jobs get (about 100 characters) must come back whole.
    const job = { ...input(['ct02'], ['gpu_stress']), trays: [{ deviceId: randomUUID(), name: 'ct02' }] };

    // Attempt 1: the worker shuts down once the job is submitted; the job is left running for the next attempt.
    const first = mockEnv();
    let beat: BurnInProgress | undefined;
    first.on('heartbeat', (d: BurnInProgress) => {
      beat = d;
      if (Object.keys(d.jobs).length > 0)
        first.cancel('WORKER_SHUTDOWN', new ActivityCancellationDetails({ workerShutdown: true }));
    });
    await assert.rejects(run(first, activities, job), CancelledFailure);
    const slurmJobId = Object.values(beat!.jobs)[0]!;
    assert.notEqual((await cluster.client.getJob(slurmJobId)).state, 'CANCELLED');

    // Attempt 2 resumes from that heartbeat; attempt 3 lost it (the worker died before it was sent).
    const second = await run(mockEnv({ heartbeatDetails: beat, attempt: 2 }), activities, job);
    const third = await run(mockEnv({ attempt: 3 }), activities, job);
    for (const r of [second, third])
      assert.deepEqual(
        r.verdicts.map((v) => [v.slurmJobId, v.verdict, v.message]),
        [[slurmJobId, 'pass', 'passed']],
      );
    const slurmJobs = await jobsOf(job.jobId);
    assert.deepEqual(
      slurmJobs.map((j) => [j.id, j.state]),
      [[slurmJobId, 'COMPLETED']],
    );
    // slurmctld agrees: one job of that name in its whole list.
    const name = slurmJobs[0]!.name;
    const lines = cluster.scontrol('show', 'job', '--oneliner').split('\n');
    assert.equal(lines.filter((l) => l.includes(`JobName=${name} `)).length, 1);
  });

  it('a heartbeat naming a job slurmctld has forgotten is JobLost; nothing is submitted in its place', async () => {
    const job = input(['ct01'], ['gpu_stress']);
    const name = `fleet-burnin.${job.jobId}.dev-ct01.gpu_stress.a1`;
    const heartbeat: BurnInProgress = { jobs: { [name]: 999_999 }, settled: {} };
    const result = await run(mockEnv({ heartbeatDetails: heartbeat, attempt: 2 }), activities, job);
    assert.deepEqual(
      result.verdicts.map((v) => [v.reason, v.slurmJobId]),
      [['JobLost', 999_999]],
    );
    assert.equal((await jobsOf(job.jobId)).length, 0);
  });

  it('cancelling the activity cancels its running SLURM job', async () => {
    override = () => '#!/bin/bash\nsleep 120\n';
    const env = mockEnv();
    let slurmJobId: number | undefined;
    env.on('heartbeat', (d: BurnInProgress) => (slurmJobId ??= Object.values(d.jobs)[0]));
    const job = input(['ct03'], ['memory']);
    const running = run(env, activities, job);
    try {
      const until = Date.now() + 20_000;
      while (slurmJobId === undefined || (await cluster.client.getJob(slurmJobId)).state !== 'RUNNING') {
        assert.ok(Date.now() < until, 'the job did not start within 20 s');
        await sleep(100);
      }
      env.cancel();
      await assert.rejects(running, CancelledFailure);
    } finally {
      override = undefined;
    }
    const after = await cluster.client.followJob(slurmJobId, { timeoutMs: 10_000, intervalMs: 200 });
    assert.equal(after.state, 'CANCELLED');
    assert.equal((await jobsOf(job.jobId)).length, 1);
  });
});

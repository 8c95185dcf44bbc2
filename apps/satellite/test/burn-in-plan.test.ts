import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { pino } from 'pino';
import { createBurnInActivities } from '../src/activities/burn-in.js';
import type { BurnInInput } from '@fleet/domain';
import { BurnInInputError, planBurnIn } from '../src/burn-in/index.js';
import { SatelliteConfig } from '../src/config.js';
import { mockEnv } from './helpers/devices.js';

const input: BurnInInput = {
  jobId: '0b9d6c1e-58a4-4f7e-9a53-0f1c2d3e4f50',
  attempt: 1,
  rackId: 'r001',
  trays: [
    { deviceId: 'd1', name: 'dev-01-r001-ct01' },
    { deviceId: 'd2', name: 'dev-01-r001-ct02' },
  ],
  tests: ['gpu_stress', 'memory', 'nvlink_allreduce'],
};

describe('burn-in plan', () => {
  it('one job per tray test and tray, one rack job over every tray, named by job, subject, test and attempt', () => {
    const plan = planBurnIn(input);
    assert.deepEqual(
      plan.map((j) => [j.name, j.trays.map((t) => t.deviceId)]),
      [
        [`fleet-burnin.${input.jobId}.d1.gpu_stress.a1`, ['d1']],
        [`fleet-burnin.${input.jobId}.d2.gpu_stress.a1`, ['d2']],
        [`fleet-burnin.${input.jobId}.d1.memory.a1`, ['d1']],
        [`fleet-burnin.${input.jobId}.d2.memory.a1`, ['d2']],
        [`fleet-burnin.${input.jobId}.rack-r001.nvlink_allreduce.a1`, ['d1', 'd2']],
      ],
    );
    // The same input names the same jobs (what makes a retry find them); a new attempt names new ones.
    assert.deepEqual(
      planBurnIn({ ...input }).map((j) => j.name),
      plan.map((j) => j.name),
    );
    assert.ok(planBurnIn({ ...input, attempt: 2 }).every((j) => j.name.endsWith('.a2')));
  });

  it('refuses input it cannot name jobs for or run', () => {
    const bad: [Partial<BurnInInput>, RegExp][] = [
      [{ rackId: undefined }, /nvlink_allreduce runs over a rack: rackId must be given/],
      [{ trays: [] }, /no trays/],
      [{ tests: [] }, /no tests/],
      [{ tests: ['gpu_stress', 'gpu_stress'] }, /named twice/],
      [{ tests: ['dgemm' as never] }, /unknown test "dgemm"/],
      [{ attempt: 0 }, /attempt 0/],
      [{ jobId: 'a b' }, /jobId "a b"/],
      [{ trays: [{ deviceId: 'd1', name: 'ct01; rm -rf /' }] }, /tray name .* is not a plain identifier/],
      [{ trays: [input.trays[0]!, { deviceId: 'd1', name: 'x' }] }, /deviceId is listed twice/],
    ];
    for (const [over, message] of bad)
      assert.throws(
        () => planBurnIn({ ...input, ...over }),
        (e: unknown) => e instanceof BurnInInputError && message.test(e.message),
      );
  });
});

describe('satellite config: burnIn', () => {
  const base = {
    siteId: 'dev-01',
    log: { level: 'info' },
    metrics: { port: 0 },
    temporal: { address: '127.0.0.1:7233', namespace: 'default' },
    secrets: { provider: 'file', path: '/etc/fleet/secrets.json' },
  };
  const burnIn = {
    slurm: { url: 'http://127.0.0.1:6820', tokenFile: '/run/slurm/token', partition: 'burnin' },
    outputDir: '/srv/burnin',
    site: { kind: 'simulated', simulatorUrl: 'http://127.0.0.1:9000' },
  };

  it('is optional, and filled in with defaults when given', () => {
    assert.equal(SatelliteConfig.parse(base).burnIn, undefined);
    const parsed = SatelliteConfig.parse({ ...base, burnIn }).burnIn;
    assert.deepEqual(parsed, {
      ...burnIn,
      slurm: { ...burnIn.slurm, user: 'root', requestTimeoutMs: 30_000 },
      jobPath: '/usr/local/bin:/usr/bin:/bin',
      timeLimitsMin: { gpu_stress: 60, memory: 60, nvlink_allreduce: 30 },
      startDeadlineS: 1800,
      overrunGraceS: 300,
      pollIntervalMs: 5_000,
    });
  });

  it('names each wrong field', () => {
    const wrong = {
      ...burnIn,
      outputDir: 'relative/dir',
      timeLimitsMin: { gpu_stress: 0 },
      site: { kind: 'dcgm' },
      extra: true,
    };
    const res = SatelliteConfig.safeParse({ ...base, burnIn: wrong });
    assert.equal(res.success, false);
    const paths = res.error!.issues.map((i) => i.path.join('.'));
    for (const p of ['burnIn.outputDir', 'burnIn.timeLimitsMin.gpu_stress', 'burnIn.site.kind', 'burnIn'])
      assert.ok(paths.includes(p), `${p} in ${paths.join(', ')}`);
  });
});

describe('runBurnIn on a satellite without burnIn config', () => {
  it('fails at once and for good, saying why (so it can be registered on every satellite)', async () => {
    const { runBurnIn } = createBurnInActivities({ adapter: undefined, log: pino({ level: 'silent' }) });
    await assert.rejects(
      mockEnv().run(runBurnIn, input),
      (e: unknown) =>
        e instanceof ApplicationFailure &&
        e.type === 'FAILED_PRECONDITION' &&
        e.nonRetryable &&
        /no burnIn config/.test(e.message),
    );
  });
});

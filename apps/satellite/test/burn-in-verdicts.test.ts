import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlurmJob } from '@fleet/slurm';
import type { BurnInVerdict } from '@fleet/domain';
import type { PlannedJob } from '../src/burn-in/plan.js';
import { parseResultLine } from '../src/burn-in/result-line.js';
import { judgeFinishedJob, type JobOutput } from '../src/burn-in/verdicts.js';

const trayJob: PlannedJob = {
  name: 'fleet-burnin.j1.dev-a.gpu_stress.a1',
  test: 'gpu_stress',
  scope: 'tray',
  trays: [{ deviceId: 'dev-a', name: 'ct01' }],
};
const rackJob: PlannedJob = {
  name: 'fleet-burnin.j1.rack-r1.nvlink_allreduce.a1',
  test: 'nvlink_allreduce',
  scope: 'rack',
  trays: [
    { deviceId: 'dev-a', name: 'ct01' },
    { deviceId: 'dev-b', name: 'ct02' },
  ],
};

function slurmJob(over: Partial<SlurmJob> = {}): SlurmJob {
  return {
    id: 42,
    name: trayJob.name,
    state: 'COMPLETED',
    stateReason: 'None',
    stateDescription: '',
    finished: true,
    exitCode: 0,
    signal: null,
    rawExitCode: 0,
    partition: 'burnin',
    comment: '',
    userName: 'root',
    nodes: 'localhost',
    cwd: '/jobs',
    stdoutPath: '/jobs/fleet-burnin-42.out',
    stderrPath: '/jobs/fleet-burnin-42.out',
    submitTime: null,
    startTime: null,
    endTime: null,
    ...over,
  };
}

const line = (body: unknown) => `FLEET_BURNIN_RESULT ${JSON.stringify(body)}`;
const result = (results: unknown[], over: Record<string, unknown> = {}) =>
  line({ v: 1, test: 'gpu_stress', slurmJobId: '42', results, ...over });
const pass = (device = 'ct01') => ({ device, verdict: 'pass', failures: [] });
const out = (...lines: string[]): JobOutput => ({ ok: true, text: `fleet burn-in: starting\n${lines.join('\n')}\n` });

function only(verdicts: BurnInVerdict[]): BurnInVerdict {
  assert.equal(verdicts.length, 1);
  return verdicts[0]!;
}

describe('burn-in result line', () => {
  it('reads the one result line among other output', () => {
    const parsed = parseResultLine(`noise\n${result([pass()])}\nmore noise\n`);
    assert.ok(parsed.ok);
    assert.equal(parsed.line.results[0]?.device, 'ct01');
  });

  it('refuses a missing line, garbage, cut-short JSON, two lines and a wrong shape, saying which', () => {
    const cases: [string, string, RegExp][] = [
      ['GPU burn finished OK\n', 'NoResult', /no FLEET_BURNIN_RESULT line/],
      ['FLEET_BURNIN_RESULT \u0000\u0001garbage%%', 'UnparsableResult', /not JSON .*garbage%%/],
      ['FLEET_BURNIN_RESULT {"v":1,"test":"gpu_st', 'UnparsableResult', /not JSON/],
      [`${result([pass()])}\n${result([pass()])}`, 'UnparsableResult', /2 FLEET_BURNIN_RESULT lines/],
      [result([{ device: 'ct01', verdict: 'ok', failures: [] }]), 'UnparsableResult', /results\.0\.verdict/],
      [line({ v: 2, test: 'gpu_stress', slurmJobId: '42', results: [pass()] }), 'UnparsableResult', /\bv\b/],
      [result([]), 'UnparsableResult', /results/],
      ['FLEET_BURNIN_RESULT{"v":1}', 'UnparsableResult', /is not "FLEET_BURNIN_RESULT <json>"/],
    ];
    for (const [text, reason, message] of cases) {
      const parsed = parseResultLine(text);
      assert.equal(parsed.ok, false, text);
      if (parsed.ok) continue;
      assert.equal(parsed.reason, reason, text);
      assert.match(parsed.message, message, text);
    }
  });
});

describe('burn-in verdicts (fail closed)', () => {
  it('passes a tray only for COMPLETED, exit 0 and a pass line for that tray, test and job', () => {
    const v = only(judgeFinishedJob(trayJob, slurmJob(), out(result([pass()]))));
    assert.deepEqual(v, {
      deviceId: 'dev-a',
      test: 'gpu_stress',
      verdict: 'pass',
      reason: null,
      message: 'passed',
      slurmJobId: 42,
      slurmState: 'COMPLETED',
      slurmReason: 'None',
    });
  });

  it('fails a tray the line fails, with the failures the test found', () => {
    const text = out(result([{ device: 'ct01', verdict: 'fail', failures: ['GPU_2: Critical (XID 79)'] }]));
    const v = only(judgeFinishedJob(trayJob, slurmJob(), text));
    assert.equal(v.verdict, 'fail');
    assert.equal(v.reason, 'TestFailed');
    assert.equal(v.message, 'GPU_2: Critical (XID 79)');
  });

  it('fails "pass" with failures listed, and "fail" without any', () => {
    const contradictory = result([{ device: 'ct01', verdict: 'pass', failures: ['HBM retired pages'] }]);
    assert.equal(only(judgeFinishedJob(trayJob, slurmJob(), out(contradictory))).reason, 'TestFailed');
    const silent = result([{ device: 'ct01', verdict: 'fail', failures: [] }]);
    const v = only(judgeFinishedJob(trayJob, slurmJob(), out(silent)));
    assert.equal(v.reason, 'TestFailed');
    assert.match(v.message, /without saying why/);
  });

  it('garbage, a missing line and partial JSON each fail with their reason', () => {
    const garbage = only(judgeFinishedJob(trayJob, slurmJob(), out('FLEET_BURNIN_RESULT ###garbage###')));
    assert.equal(garbage.reason, 'UnparsableResult');
    assert.match(garbage.message, /###garbage###/);
    const missing = only(judgeFinishedJob(trayJob, slurmJob(), out('dcgmi: all tests passed')));
    assert.equal(missing.reason, 'NoResult');
    assert.match(missing.message, /last output: dcgmi: all tests passed/);
    const partial = only(judgeFinishedJob(trayJob, slurmJob(), out('FLEET_BURNIN_RESULT {"v":1,"results":[{"dev')));
    assert.equal(partial.reason, 'UnparsableResult');
  });

  it('a result for another tray, test or SLURM job is not this one', () => {
    const other = only(judgeFinishedJob(trayJob, slurmJob(), out(result([pass('ct09')]))));
    assert.equal(other.reason, 'WrongDevice');
    assert.match(other.message, /names ct09; this job tested ct01/);
    const extra = only(judgeFinishedJob(trayJob, slurmJob(), out(result([pass(), pass('ct09')]))));
    assert.equal(extra.reason, 'WrongDevice');
    const twice = only(judgeFinishedJob(trayJob, slurmJob(), out(result([pass(), pass()]))));
    assert.equal(twice.reason, 'WrongDevice');
    assert.match(twice.message, /ct01 twice/);
    const test = only(judgeFinishedJob(trayJob, slurmJob(), out(result([pass()], { test: 'memory' }))));
    assert.equal(test.reason, 'WrongTest');
    const job = only(judgeFinishedJob(trayJob, slurmJob(), out(result([pass()], { slurmJobId: '41' }))));
    assert.equal(job.reason, 'WrongTest');
    assert.match(job.message, /from SLURM job 41, not 42/);
  });

  it('a rack test judges each tray, and fails a tray the line leaves out', () => {
    const rack = (results: unknown[]) => out(result(results, { test: 'nvlink_allreduce' }));
    const fault = { device: 'ct02', verdict: 'fail', failures: ['GPU_1/NVLink_5: Critical (CRC)'] };
    const both = judgeFinishedJob(rackJob, slurmJob(), rack([pass(), fault]));
    assert.deepEqual(
      both.map((v) => [v.deviceId, v.verdict, v.reason]),
      [
        ['dev-a', 'pass', null],
        ['dev-b', 'fail', 'TestFailed'],
      ],
    );
    const missing = judgeFinishedJob(rackJob, slurmJob(), rack([pass()]));
    assert.deepEqual(
      missing.map((v) => [v.deviceId, v.reason]),
      [
        ['dev-a', null],
        ['dev-b', 'WrongDevice'],
      ],
    );
  });

  it('a non-zero exit fails even with a pass line; a fail line keeps its findings', () => {
    const failed = slurmJob({ state: 'FAILED', stateReason: 'NonZeroExitCode', exitCode: 3, rawExitCode: 768 });
    const passLine = only(judgeFinishedJob(trayJob, failed, out(result([pass()]))));
    assert.equal(passLine.reason, 'NonZeroExit');
    assert.match(passLine.message, /exit code 3 although it reported a pass/);
    const noLine = only(judgeFinishedJob(trayJob, failed, out('curl: (7) Failed to connect to 10.0.0.1 port 8000')));
    assert.equal(noLine.reason, 'NonZeroExit');
    assert.match(noLine.message, /exit code 3; no FLEET_BURNIN_RESULT line.*last output: curl: \(7\)/);
    const failLine = result([{ device: 'ct01', verdict: 'fail', failures: ['GPU_0: Critical (XID 48)'] }]);
    const found = only(judgeFinishedJob(trayJob, failed, out(failLine)));
    assert.equal(found.reason, 'TestFailed');
    assert.equal(found.message, 'GPU_0: Critical (XID 48) (exit code 3)');
  });

  it('SLURM ends other than COMPLETED and FAILED fail with their reason, whatever the output says', () => {
    const good = out(result([pass()]));
    const cases: [Partial<SlurmJob>, string][] = [
      [{ state: 'TIMEOUT', stateReason: 'TimeLimit', exitCode: null, signal: 15 }, 'TimedOut'],
      [{ state: 'CANCELLED', exitCode: null, signal: 15 }, 'Cancelled'],
      [{ state: 'NODE_FAIL', stateReason: 'NodeDown' }, 'NodeFailed'],
      [{ state: 'BOOT_FAIL' }, 'NodeFailed'],
      [{ state: 'OUT_OF_MEMORY' }, 'JobFailed'],
      [{ state: 'PREEMPTED' }, 'JobFailed'],
    ];
    for (const [over, reason] of cases) {
      const v = only(judgeFinishedJob(trayJob, slurmJob(over), good));
      assert.equal(v.verdict, 'fail', over.state);
      assert.equal(v.reason, reason, over.state);
      assert.equal(v.slurmState, over.state);
      assert.match(v.message, new RegExp(`SLURM job 42 ended ${over.state}`));
    }
  });

  it('a script killed by a signal, and an output that cannot be read, fail', () => {
    const killed = slurmJob({ state: 'FAILED', exitCode: null, signal: 9, rawExitCode: 9 });
    assert.equal(only(judgeFinishedJob(trayJob, killed, out(result([pass()])))).reason, 'Signalled');
    const unreadable: JobOutput = { ok: false, message: "cannot read the job's output /jobs/x.out: ENOENT" };
    const v = only(judgeFinishedJob(trayJob, slurmJob(), unreadable));
    assert.equal(v.reason, 'OutputUnreadable');
    assert.match(v.message, /ENOENT/);
  });

  it('keeps messages short enough to travel through Temporal', () => {
    const many = Array.from({ length: 400 }, (_, i) => `GPU_${i % 4}/NVLink_${i % 18}: Critical (CRC errors)`);
    const v = only(
      judgeFinishedJob(trayJob, slurmJob(), out(result([{ device: 'ct01', verdict: 'fail', failures: many }]))),
    );
    assert.equal(v.reason, 'TestFailed');
    assert.ok(v.message.length <= 1_000);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeWaitStatus, outputPath } from '../src/index.js';
import { jobFromRaw } from '../src/job.js';
import { jobsResponseSchema } from '../src/schema.js';

describe('decodeWaitStatus', () => {
  it('reads the exit code from the high byte', () => {
    assert.deepEqual(decodeWaitStatus(0), { exitCode: 0, signal: null });
    assert.deepEqual(decodeWaitStatus(256), { exitCode: 1, signal: null });
    assert.deepEqual(decodeWaitStatus(2 << 8), { exitCode: 2, signal: null });
    assert.deepEqual(decodeWaitStatus(255 << 8), { exitCode: 255, signal: null });
  });

  it('reads a signal from the low bits, with no exit code', () => {
    assert.deepEqual(decodeWaitStatus(9), { exitCode: null, signal: 9 });
    assert.deepEqual(decodeWaitStatus(15), { exitCode: null, signal: 15 });
    assert.deepEqual(decodeWaitStatus(0x80 | 11), { exitCode: null, signal: 11 }, 'core dumped');
  });
});

describe('outputPath', () => {
  const job = { id: 42, name: 'burnin-t1', userName: 'root', cwd: '/srv/jobs' };
  it('expands %j, %x, %u and %%', () => {
    assert.equal(outputPath('/out/%x-%j.%u.log', job), '/out/burnin-t1-42.root.log');
    assert.equal(outputPath('/out/100%%-%j', job), '/out/100%-42');
  });
  it("uses Slurm's default slurm-%j.out in the working directory", () => {
    assert.equal(outputPath('', job), '/srv/jobs/slurm-42.out');
  });
  it('resolves a relative path against the working directory and leaves unknown patterns', () => {
    assert.equal(outputPath('logs/%j-%N.out', job), '/srv/jobs/logs/42-%N.out');
  });
});

describe('jobFromRaw', () => {
  const raw = (fields: Record<string, unknown>) =>
    jobsResponseSchema.parse({
      errors: [],
      jobs: [{ job_id: 7, name: 'n', job_state: 'RUNNING', exit_code: 0, some_new_field: { x: 1 }, ...fields }],
    }).jobs[0]!;

  it('ignores fields it does not read', () => {
    assert.equal('some_new_field' in raw({}), false);
  });

  it('gives an unfinished job no exit code, though slurmrestd says 0', () => {
    const job = jobFromRaw(raw({ job_state: 'PENDING', state_reason: 'PartitionDown' }));
    assert.equal(job.finished, false);
    assert.equal(job.exitCode, null);
    assert.equal(job.rawExitCode, 0);
    assert.equal(job.stateReason, 'PartitionDown');
  });

  it('decodes a finished job and its times', () => {
    const job = jobFromRaw(
      raw({ job_state: 'FAILED', exit_code: 512, start_time: 1_700_000_000, end_time: 0, standard_error: 'e-%j' }),
    );
    assert.equal(job.finished, true);
    assert.equal(job.exitCode, 2);
    assert.equal(job.startTime?.toISOString(), '2023-11-14T22:13:20.000Z');
    assert.equal(job.endTime, null);
    assert.equal(job.stdoutPath, '/slurm-7.out');
    assert.equal(job.stderrPath, '/e-7');
  });

  it('refuses a job without the fields a verdict needs', () => {
    assert.throws(() => jobsResponseSchema.parse({ jobs: [{ job_id: 7, name: 'n' }] }));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlurmClient, SlurmJob } from '@fleet/slurm';
import { JobWatch } from '../src/burn-in/job-watch.js';

/** A client whose listings the test settles, counting them. */
function fakeSlurm() {
  const pending: { resolve: (jobs: SlurmJob[]) => void; reject: (err: Error) => void }[] = [];
  const slurm = {
    listJobs: () => new Promise<SlurmJob[]>((resolve, reject) => pending.push({ resolve, reject })),
  } as unknown as SlurmClient;
  return { slurm, pending };
}
const job = (id: number) => ({ id, name: `j${id}` }) as SlurmJob;
const never = new AbortController().signal;

describe('burn-in job watch', () => {
  it('shares one listing among runs that can use it, and starts another for a run that needs a newer one', async () => {
    const { slurm, pending } = fakeSlurm();
    const watch = new JobWatch(slurm);
    const t0 = Date.now();
    const a = watch.list(t0 - 1000, never);
    const b = watch.list(t0 - 1000, never);
    assert.equal(pending.length, 1, 'one GET /jobs for both');
    pending[0]!.resolve([job(1)]);
    assert.deepEqual(await a, [job(1)]);
    assert.deepEqual(await b, [job(1)]);
    // A run that submitted after that listing began needs one that starts later.
    await new Promise((r) => setTimeout(r, 5));
    const c = watch.list(Date.now(), never);
    assert.equal(pending.length, 2);
    pending[1]!.resolve([job(1), job(2)]);
    assert.deepEqual(await c, [job(1), job(2)]);
  });

  it('a failed listing is not reused; a cancelled run stops waiting without cancelling the listing', async () => {
    const { slurm, pending } = fakeSlurm();
    const watch = new JobWatch(slurm);
    const first = watch.list(0, never);
    pending[0]!.reject(new Error('slurmrestd down'));
    await assert.rejects(first, /slurmrestd down/);
    const abort = new AbortController();
    const second = watch.list(0, abort.signal);
    const third = watch.list(0, never);
    assert.equal(pending.length, 2, 'a new listing after the failure, shared by the next two');
    abort.abort(new Error('cancelled'));
    await assert.rejects(second, /cancelled/);
    pending[1]!.resolve([job(3)]);
    assert.deepEqual(await third, [job(3)]);
  });
});

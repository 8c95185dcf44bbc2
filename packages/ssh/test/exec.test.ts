import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NvosSimulator } from '@fleet/simulators';
import { SshError, type SshSession } from '../src/index.js';
import { open, startSim } from './helpers.js';

describe('SSH exec', () => {
  let sim: NvosSimulator;
  let s: SshSession;
  before(async () => {
    sim = await startSim([{ id: 'sw1' }]);
    s = await open(sim, 'sw1');
  });
  after(async () => {
    s.close();
    await sim.close();
  });

  it('returns exit code, stdout and stderr; a failing command is a result, not an error', async () => {
    const ok = await s.exec('nv show system version');
    assert.equal(ok.code, 0);
    assert.equal(JSON.parse(ok.stdout).image, '25.02.4282');
    assert.deepEqual(await s.exec('frobnicate --now'), {
      code: 127,
      stdout: '',
      stderr: '-bash: frobnicate: command not found\n',
      truncated: false,
    });
  });

  it('caps what it keeps of the output', async () => {
    const r = await s.exec('nv show system image', { maxOutputBytes: 16 });
    assert.equal(r.stdout.length, 16);
    assert.equal(r.truncated, true);
  });

  it('kills a command at its timeout, or when cancelled, and the session goes on', async () => {
    const started = Date.now();
    const e = await s.exec('sleep 5', { timeoutMs: 100 }).catch((err: unknown) => err);
    assert.ok(e instanceof SshError);
    assert.deepEqual([e.kind, e.step, e.causeText], ['Timeout', 'exec', 'sleep did not finish within 100 ms']);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('job cancelled')), 50);
    await assert.rejects(s.exec('sleep 5', { signal: ac.signal }), /job cancelled/);
    assert.ok(Date.now() - started < 2_000);
    assert.equal((await s.exec('echo still here')).stdout, 'still here\n');
  });

  it('refuses to run on a closed session', async () => {
    const other = await open(sim, 'sw1');
    other.close();
    await new Promise((r) => setTimeout(r, 20));
    await assert.rejects(other.exec('echo x'), (e: unknown) => e instanceof SshError && e.kind === 'Closed');
  });
});

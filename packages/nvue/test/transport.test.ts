import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NvosSimulator } from '@fleet/simulators';
import { createRevision, getImage, getSystem, isRetryableDuringReboot, NvueError } from '../src/index.js';
import { clientFor, requests, startSim } from './helpers.js';

describe('NVUE client transport against the NVOS simulator', () => {
  let sim: NvosSimulator;
  before(async () => {
    sim = await startSim([{ id: 't1' }, { id: 't2' }, { id: 't3' }]);
  });
  after(() => sim.close());
  const errorOf = async (p: Promise<unknown>) => {
    const e = await p.catch((err: unknown) => err);
    assert.ok(e instanceof NvueError, String(e));
    return e;
  };

  it('sends one request at a time to a switch, whatever the callers do', async () => {
    sim.switch('t1').setFaults({ latencyMs: 20 });
    const c = clientFor(sim, 't1');
    try {
      await Promise.all([getSystem(c), getImage(c), getSystem(c), getImage(c), getSystem(c)]);
      assert.equal(sim.switch('t1').peakConcurrentRequests, 1);
      assert.equal(requests(sim, 't1').length, 5);
    } finally {
      sim.switch('t1').setFaults({});
      await c.close();
    }
  });

  it('retries 503 up to maxAttempts and names switch, request and status in the error', async () => {
    sim.switch('t2').clearNvueLog();
    sim.switch('t2').setFaults({ errorRate: 1, errorStatus: 503 });
    const c = clientFor(sim, 't2', { maxAttempts: 3 });
    try {
      const e = await errorOf(getSystem(c));
      assert.deepEqual(
        [e.kind, e.switchId, e.method, e.uri, e.status, e.retryable],
        ['Unavailable', 't2', 'GET', '/nvue_v1/system', 503, true],
      );
      assert.equal(e.message, 'Unavailable: t2 GET /nvue_v1/system: simulated failure (HTTP 503)');
      assert.equal(requests(sim, 't2').length, 3);
      // A POST the switch refused with 503 was not acted on: it is resent too.
      sim.switch('t2').clearNvueLog();
      await errorOf(createRevision(c));
      assert.equal(requests(sim, 't2').length, 3);

      sim.switch('t2').setFaults({ errorRate: 1, errorStatus: 500 });
      sim.switch('t2').clearNvueLog();
      const internal = await errorOf(getSystem(c));
      assert.deepEqual([internal.kind, internal.retryable], ['Internal', false]);
      assert.equal(requests(sim, 't2').length, 1, 'a 500 is not retried');
    } finally {
      sim.switch('t2').setFaults({});
      await c.close();
    }
  });

  it('resends a timed-out GET but never a timed-out POST', async () => {
    sim.switch('t2').clearNvueLog();
    sim.switch('t2').setFaults({ hang: true });
    const c = clientFor(sim, 't2', { requestTimeoutMs: 200, maxAttempts: 2 });
    try {
      const get = await errorOf(getSystem(c));
      assert.equal(get.kind, 'Timeout');
      const post = await errorOf(createRevision(c));
      assert.equal(post.kind, 'Timeout');
      assert.match(post.causeText, /not resent because the request is not idempotent/);
      // The switch logs a dropped request when the client hangs up.
      for (let i = 0; i < 100 && requests(sim, 't2').length < 3; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(
        requests(sim, 't2').map((r) => r.line),
        ['GET /nvue_v1/system', 'GET /nvue_v1/system', 'POST /nvue_v1/revision'],
      );
    } finally {
      sim.switch('t2').setFaults({});
      await c.close();
    }
  });

  it('gives up at once when cancelled, with the caller own reason', async () => {
    sim.switch('t3').setFaults({ hang: true });
    const outer = new AbortController();
    const c = clientFor(sim, 't3', { signal: outer.signal });
    try {
      const call = new AbortController();
      const started = Date.now();
      setTimeout(() => call.abort(new Error('job cancelled')), 50);
      await assert.rejects(getSystem(c, { signal: call.signal }), /job cancelled/);
      assert.ok(Date.now() - started < 1_000);
      setTimeout(() => outer.abort(new Error('worker shutting down')), 20);
      await assert.rejects(getSystem(c), /worker shutting down/);
    } finally {
      sim.switch('t3').setFaults({});
      await c.close();
    }
  });

  it('reports refused connections as retryable (a rebooting switch) and a wrong password as final', async () => {
    sim.switch('t3').setFaults({ nvueUnavailable: true });
    const c = clientFor(sim, 't3', { maxAttempts: 2 });
    try {
      await new Promise((r) => setTimeout(r, 20));
      const down = await errorOf(getSystem(c));
      assert.equal(down.kind, 'Unavailable');
      assert.match(down.causeText, /^ECONNREFUSED/);
      assert.equal(isRetryableDuringReboot(down), true);
      sim.switch('t3').setFaults({});
      const wrong = clientFor(sim, 't3', { credentials: { username: 'admin', password: 'wrong' } });
      const denied = await errorOf(getSystem(wrong));
      await wrong.close();
      assert.deepEqual([denied.kind, denied.status, isRetryableDuringReboot(denied)], ['Unauthenticated', 401, false]);
      assert.doesNotMatch(denied.message, /wrong/);
    } finally {
      await c.close();
    }
  });
});

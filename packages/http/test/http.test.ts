import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { errors as undiciErrors, request } from 'undici';
import {
  anySignal,
  backoffMs,
  classifyTransportError,
  normaliseCertFingerprint,
  parseJsonOrText,
  requestSignal,
  retryAfterMs,
  sleep,
} from '../src/index.js';

describe('shared HTTP transport', () => {
  it('backs off exponentially with jitter, capped', () => {
    for (let i = 0; i < 200; i++) {
      const first = backoffMs(1, 100, 10_000);
      assert.ok(first >= 50 && first < 150, String(first));
      assert.ok(backoffMs(20, 100, 1_000) < 1_500);
    }
  });

  it('reads Retry-After as seconds or an HTTP date, capped, and ignores what it cannot read', () => {
    assert.equal(retryAfterMs('3', 60_000), 3_000);
    assert.equal(retryAfterMs(['120'], 60_000), 60_000);
    const at = retryAfterMs(new Date(Date.now() + 5_000).toUTCString(), 60_000)!;
    assert.ok(at > 3_000 && at <= 5_000, String(at));
    assert.equal(retryAfterMs('soon', 60_000), undefined);
    assert.equal(retryAfterMs(undefined, 60_000), undefined);
  });

  it('sleeps until aborted, rejecting with the caller reason', async () => {
    const c = new AbortController();
    const slept = sleep(10_000, c.signal);
    c.abort(new Error('stop'));
    await assert.rejects(slept, /stop/);
    assert.equal(anySignal(undefined, undefined), undefined);
    assert.equal(anySignal(c.signal, undefined), c.signal);
  });

  it("a request's signal follows its caller and its deadline; released, it is unhooked from the caller", async () => {
    const caller = new AbortController();
    const cancelled = requestSignal(60_000, caller.signal);
    assert.equal(getEventListeners(caller.signal, 'abort').length, 1);
    const timedOut = requestSignal(10, caller.signal);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(timedOut.signal.aborted, true);
    assert.equal((timedOut.signal.reason as Error).name, 'TimeoutError');
    assert.equal(timedOut.deadline.aborted, true);
    timedOut.release();

    // A long-lived caller (an activity's cancellation signal) keeps nothing of the requests it made.
    for (let i = 0; i < 1000; i++) requestSignal(60_000, caller.signal).release();
    assert.equal(getEventListeners(caller.signal, 'abort').length, 1, 'only the request still open');
    caller.abort(new Error('cancelled'));
    assert.equal(cancelled.signal.aborted, true);
    assert.equal((cancelled.signal.reason as Error).message, 'cancelled');
    assert.equal(cancelled.deadline.aborted, false, 'the caller cancelled: no timeout');
    cancelled.release();
    assert.equal(requestSignal(60_000, caller.signal).signal.aborted, true, 'a caller aborted already');
  });

  it(`classifies failures for retries: refused connections are safe, a caller abort is the caller reason, timeouts may \
have landed`, async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = await request(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    const ctx = { caller: undefined, ...requestSignal(5_000, undefined), timeoutMs: 5_000 };
    assert.deepEqual(
      { ...classifyTransportError(refused, ctx), cause: undefined },
      { kind: 'Unavailable', message: `ECONNREFUSED: ${(refused as Error).message}`, retry: 'safe', cause: undefined },
    );

    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    assert.equal(
      (classifyTransportError(reset, ctx) as { retry: string }).retry,
      'idempotent',
      'a reset request may have reached the device',
    );
    assert.equal(
      (classifyTransportError(new undiciErrors.HeadersTimeoutError(), ctx) as { kind: string }).kind,
      'Timeout',
    );
    assert.equal(
      (classifyTransportError(new undiciErrors.ConnectTimeoutError(), ctx) as { retry: string }).retry,
      'safe',
    );
    const tls = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    assert.deepEqual(classifyTransportError(tls, ctx), {
      kind: 'TlsVerification',
      message: 'TLS verification failed: self-signed certificate',
      retry: 'never',
      cause: tls,
    });

    const caller = new AbortController();
    caller.abort(new Error('cancelled by the workflow'));
    assert.deepEqual(classifyTransportError(new Error('aborted'), { ...ctx, caller: caller.signal }), {
      cancelled: caller.signal.reason,
    });
  });

  it('normalises pinned fingerprints and parses JSON or keeps the text', () => {
    const hex = 'ab'.repeat(32);
    assert.equal(normaliseCertFingerprint(hex.match(/../g)!.join(':')), hex.toUpperCase());
    assert.throws(() => normaliseCertFingerprint('SHA256:abc'), RangeError);
    assert.deepEqual(parseJsonOrText('{"a":1}'), { a: 1 });
    assert.equal(parseJsonOrText('15'), 15);
    assert.equal(parseJsonOrText('not json'), 'not json');
  });
});

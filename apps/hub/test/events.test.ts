import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  applyJobProjections,
  insertDevice,
  insertJobWithStartIntent,
  insertSite,
  setCondition,
  setLifecycle,
  type SetConditionInput,
} from '@fleet/db';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// GET /v1/events over real HTTP: events come from the triggers' NOTIFY through the hub's one listener.

interface Received {
  id: string | undefined;
  event: string;
  data: Record<string, unknown>;
}

/** Opens the stream and reads it event by event. */
async function openStream(base: string, token: string, opts: { query?: string; lastEventId?: string } = {}) {
  const abort = new AbortController();
  const res = await fetch(`${base}/v1/events${opts.query ?? ''}`, {
    headers: {
      authorization: `Bearer ${token}`,
      ...(opts.lastEventId ? { 'last-event-id': opts.lastEventId } : {}),
    },
    signal: abort.signal,
  });
  assert.equal(res.status, 200, await (res.status === 200 ? '' : res.text()));
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  const queue: Received[] = [];
  const readMore = async () => {
    const { done, value } = await reader.read();
    if (done) ended = true;
    else buffer += decoder.decode(value, { stream: true });
    for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const fields = new Map(
        block
          .split('\n')
          .filter((l) => !l.startsWith(':') && l.includes(': '))
          .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)] as const),
      );
      if (fields.has('data'))
        queue.push({
          id: fields.get('id'),
          event: fields.get('event') ?? 'message',
          data: JSON.parse(fields.get('data')!),
        });
    }
  };
  return {
    /** The next event, within 5 s. */
    next: async (): Promise<Received> => {
      const deadline = Date.now() + 5_000;
      while (!queue.length) {
        assert.ok(!ended, 'the stream ended');
        const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), deadline - Date.now()).unref());
        if ((await Promise.race([readMore(), timeout])) === 'timeout') assert.fail('no event within 5 s');
      }
      return queue.shift()!;
    },
    /** Resolves when the server ends the stream. */
    ended: async () => {
      while (!ended) await readMore().catch(() => (ended = true));
    },
    close: () => abort.abort(),
  };
}

describe('GET /v1/events', () => {
  let hub: TestHub;
  let base = '';
  let jobId = '';
  let deviceId = '';

  before(async () => {
    hub = await startTestHub();
    base = await hub.app.listen({ host: '127.0.0.1', port: 0 });
    const { db } = hub.handle;
    await insertSite(db, { id: 'ev', name: 'Events' });
    deviceId = (await insertDevice(db, { name: 'tray', siteId: 'ev', nodeType: 'compute_gb200_nvidia' })).id;
    jobId = (
      await insertJobWithStartIntent(db, {
        kind: 'device.power',
        siteId: 'ev',
        deviceId,
        params: { action: 'on' },
        createdBy: 'test',
      })
    ).id;
  });
  after(() => hub.close());

  it('a job state change written by the projection reaches the stream', async () => {
    const stream = await openStream(base, hub.tokens.viewer, { query: '?types=job' });
    try {
      await applyJobProjections(hub.handle.db, [{ id: jobId, state: 'running', startedAt: new Date() }]);
      const e = await stream.next();
      assert.equal(e.event, 'job');
      assert.match(e.id ?? '', /^\d+$/);
      assert.deepEqual(
        { type: e.data['type'], id: e.data['id'], state: e.data['state'], device_id: e.data['device_id'] },
        { type: 'job', id: jobId, state: 'running', device_id: deviceId },
      );
    } finally {
      stream.close();
    }
  });

  it('a lifecycle move and a condition change are device events; a report that changes nothing is none', async () => {
    const stream = await openStream(base, hub.tokens.viewer, { query: '?types=device' });
    const { db } = hub.handle;
    try {
      await setLifecycle(db, { deviceId, to: 'enrolling', writer: 'lifecycle-workflow', jobId, reason: 'Enrol' });
      const moved = await stream.next();
      assert.deepEqual(
        { event: moved.event, id: moved.data['id'], lifecycle: moved.data['lifecycle'] },
        { event: 'device', id: deviceId, lifecycle: 'enrolling' },
      );
      const report: SetConditionInput = {
        deviceId,
        type: 'BMCReachable',
        status: 'True',
        reason: 'RedfishAnswered',
        writer: 'satellite',
      };
      await setCondition(db, report);
      await setCondition(db, report); // the same report again: nothing a reader shows changed
      await setCondition(db, { ...report, status: 'False', reason: 'RedfishTimeout' });
      const conditions = [await stream.next(), await stream.next()].map((e) => [e.data['id'], e.data['condition']]);
      assert.deepEqual(conditions, [
        [deviceId, { type: 'BMCReachable', status: 'True', reason: 'RedfishAnswered' }],
        [deviceId, { type: 'BMCReachable', status: 'False', reason: 'RedfishTimeout' }],
      ]);
    } finally {
      stream.close();
    }
  });

  it('Last-Event-ID replays what a reconnecting client missed, in order, filtered by type', async () => {
    const first = await openStream(base, hub.tokens.viewer);
    await hub.handle.pool.query(`update devices set power_state = 'On' where id = $1`, [deviceId]);
    const seen = await first.next();
    assert.deepEqual([seen.event, seen.data['id'], seen.data['power_state']], ['device', deviceId, 'On']);
    first.close();

    // Missed while away: the job ends, the device goes off.
    await applyJobProjections(hub.handle.db, [{ id: jobId, state: 'succeeded', finishedAt: new Date() }]);
    await hub.handle.pool.query(`update devices set power_state = 'Off' where id = $1`, [deviceId]);

    const resumed = await openStream(base, hub.tokens.viewer, { lastEventId: seen.id! });
    try {
      const a = await resumed.next();
      const b = await resumed.next();
      assert.deepEqual(
        [a.event, a.data['state'], b.event, b.data['power_state']],
        ['job', 'succeeded', 'device', 'Off'],
      );
      assert.ok(Number(a.id) > Number(seen.id) && Number(b.id) > Number(a.id));
      // Live events follow the replay.
      await hub.handle.pool.query(`update devices set lifecycle_state = 'failed' where id = $1`, [deviceId]);
      const live = await resumed.next();
      assert.deepEqual([live.event, live.data['lifecycle_state']], ['device', 'failed']);
    } finally {
      resumed.close();
    }

    const devicesOnly = await openStream(base, hub.tokens.viewer, { query: '?types=device', lastEventId: seen.id! });
    try {
      assert.equal((await devicesOnly.next()).data['power_state'], 'Off');
    } finally {
      devicesOnly.close();
    }
  });

  it('a Last-Event-ID from elsewhere gets a reset; a malformed one or unknown type is a 400 naming it', async () => {
    const far = await openStream(base, hub.tokens.viewer, { lastEventId: '999999999' });
    try {
      const reset = await far.next();
      assert.equal(reset.event, 'reset');
      assert.match(String(reset.data['reason']), /newer than any event/);
    } finally {
      far.close();
    }
    const bad = await hub.app.inject({
      method: 'GET',
      url: '/v1/events',
      headers: { authorization: `Bearer ${hub.tokens.viewer}`, 'last-event-id': 'abc' },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.details[0].field, 'header.Last-Event-ID');
    const type = await hub.app.inject({
      method: 'GET',
      url: '/v1/events?types=job,rack',
      headers: { authorization: `Bearer ${hub.tokens.viewer}` },
    });
    assert.equal(type.statusCode, 400);
    assert.equal(type.json().error.details[0].field, 'query.types');
    assert.equal((await hub.app.inject({ method: 'GET', url: '/v1/events' })).statusCode, 401);
  });

  it('app.close() ends open streams at once', async () => {
    const own = await startTestHub();
    const url = await own.app.listen({ host: '127.0.0.1', port: 0 });
    const streams = await Promise.all([openStream(url, own.tokens.viewer), openStream(url, own.tokens.admin)]);
    const started = Date.now();
    const closing = own.app.close();
    await Promise.all(streams.map((s) => s.ended()));
    assert.ok(Date.now() - started < 1_000, `the streams ended ${Date.now() - started} ms after close`);
    await closing;
    await own.close();
  });
});

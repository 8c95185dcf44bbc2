import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { slaPolicyWith, type HealthReading } from '@fleet/domain';
import {
  applyHealthReadings,
  applyJobProjections,
  createApiToken,
  insertDevice,
  insertJobWithStartIntent,
  insertSite,
  openRmaCase,
  racks,
  setCondition,
  setLifecycle,
  updateFacilityEvent,
  updateRmaCase,
  watchSlas,
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

  it('day-2 objects have their own types: a health change, a breach, a facility event, an RMA case', async () => {
    const { db, pool } = hub.handle;
    const sick = (await insertDevice(db, { name: 'sick', siteId: 'ev', nodeType: 'compute_gb200_nvidia' })).id;
    const day2 = await openStream(base, hub.tokens.viewer, { query: '?types=health,sla_breach,facility_event,rma' });
    const rmaOnly = await openStream(base, hub.tokens.viewer, { query: '?types=rma' });
    const devices = await openStream(base, hub.tokens.viewer, { query: '?types=device' });
    try {
      // A health change: the reading's summary, not the BMC's message.
      const gpu = {
        class: 'gpu',
        component: 'GPU_SXM_3',
        severity: 'Critical',
        message: 'XID 79 on GPU_SXM_3',
      } as const;
      const reading: HealthReading = { reachable: true, credentialsOk: true, powerState: 'On', faults: [gpu] };
      await applyHealthReadings(db, 'ev', [{ deviceId: sick, observedAt: new Date(Date.now() - 2000), reading }]);
      // The same reading observed again is no event; the fault gone is one.
      await applyHealthReadings(db, 'ev', [{ deviceId: sick, observedAt: new Date(Date.now() - 1000), reading }]);
      await applyHealthReadings(db, 'ev', [
        { deviceId: sick, observedAt: new Date(), reading: { ...reading, faults: [] } },
      ]);
      const faulty = await day2.next();
      assert.deepEqual(
        { event: faulty.event, ...faulty.data, changed_at: undefined },
        {
          event: 'health',
          type: 'health',
          id: sick,
          device_id: sick,
          site_id: 'ev',
          reachable: true,
          credentials_ok: true,
          power_state: 'On',
          fault_count: 1,
          faults: [{ class: 'gpu', component: 'GPU_SXM_3', severity: 'Critical' }],
          changed_at: undefined,
        },
      );
      const healthy = await day2.next();
      assert.deepEqual([healthy.event, healthy.data['id'], healthy.data['fault_count']], ['health', sick, 0]);
      // Its Healthy condition is the device's event still, and the device stream has no health events.
      for (const e of [await devices.next(), await devices.next()]) assert.equal(e.event, 'device');

      // A breach opened by the watch, then resolved when the device leaves the state.
      const change = await setLifecycle(db, {
        deviceId: sick,
        to: 'quarantined',
        writer: 'lifecycle-workflow',
        jobId,
        reason: 'Gpu',
      });
      // A day past the 72 h limit: exactly 72 h is no breach, and the watch may run within the same millisecond.
      await pool.query(`update device_transitions set at = now() - interval '4 days' where id = $1`, [
        change!.transition!.id,
      ]);
      const [breach] = (await watchSlas(db, slaPolicyWith({}), [])).opened;
      assert.ok(breach, 'the quarantined device breached its limit');
      const opened = await day2.next();
      assert.deepEqual(
        [opened.event, opened.data['id'], opened.data['status'], opened.data['object_id'], opened.data['sla_key']],
        ['sla_breach', breach.id, 'open', sick, 'lifecycle:quarantined'],
      );
      assert.equal(opened.data['object_type'], 'device');

      // A facility event posted by a building management system, then decided.
      const facility = (await createApiToken(db, 'bms-ev', 'facility')).token;
      const rackId = (
        await db.insert(racks).values({ siteId: 'ev', name: 'r1', rackType: 'gb200_nvl72' }).returning()
      )[0]!.id;
      const posted = await hub.app.inject({
        method: 'POST',
        url: '/v1/facility-events',
        headers: { authorization: `Bearer ${facility}` },
        payload: {
          external_id: randomUUID(),
          kind: 'cooling',
          severity: 'info',
          rack_ids: [rackId],
          message: 'CRAH 4 filter due',
        },
      });
      assert.equal(posted.statusCode, 201, posted.body);
      const recorded = await day2.next();
      assert.deepEqual(
        [
          recorded.event,
          recorded.data['id'],
          recorded.data['kind'],
          recorded.data['response'],
          recorded.data['rack_ids'],
        ],
        ['facility_event', posted.json().id, 'cooling', 'record', [rackId]],
      );
      assert.equal(recorded.data['message'], undefined, "a facility's message is read from the API");
      await updateFacilityEvent(db, posted.json().id, { decision: 'reject' });
      assert.deepEqual((await day2.next()).data['decision'], 'reject');

      // An RMA case opened, then given its vendor case id.
      const opening = await openRmaCase(db, {
        deviceId: sick,
        failedPart: 'GPU_SXM_3',
        reason: 'XID 79',
        openedBy: 'op',
      });
      await updateRmaCase(db, opening!.rmaCase.id, { vendorCaseId: 'NV-1234', mover: 'operator', by: 'op' });
      for (const stream of [day2, rmaOnly]) {
        const [open, updated] = [await stream.next(), await stream.next()];
        assert.deepEqual(
          [open.event, open.data['id'], open.data['state'], open.data['device_id'], open.data['vendor_case_id']],
          ['rma', opening!.rmaCase.id, 'open', sick, null],
        );
        assert.deepEqual([updated.event, updated.data['vendor_case_id']], ['rma', 'NV-1234']);
      }

      // The device moves on to remediation: the breach resolves, its status on the event.
      await setLifecycle(db, { deviceId: sick, to: 'remediating', writer: 'lifecycle-workflow', jobId, reason: 'Gpu' });
      assert.equal((await watchSlas(db, slaPolicyWith({}), [])).resolved.length, 1);
      const resolved = await day2.next();
      assert.deepEqual(
        [resolved.event, resolved.data['id'], resolved.data['status'], resolved.data['resolution']],
        ['sla_breach', breach.id, 'resolved', 'cleared'],
      );

      // Replay after the first health event, of two of the types only: in order, nothing else.
      const replayed = await openStream(base, hub.tokens.viewer, {
        query: '?types=sla_breach,rma',
        lastEventId: faulty.id!,
      });
      try {
        const got: Received[] = [];
        for (let i = 0; i < 4; i++) got.push(await replayed.next());
        assert.deepEqual(
          got.map((e) => [e.event, e.data['status'] ?? e.data['state']]),
          [
            ['sla_breach', 'open'],
            ['rma', 'open'],
            ['rma', 'open'],
            ['sla_breach', 'resolved'],
          ],
        );
        assert.ok(got.every((e, i) => Number(e.id) > Number(i ? got[i - 1]!.id : faulty.id)));
      } finally {
        replayed.close();
      }
    } finally {
      day2.close();
      rmaOnly.close();
      devices.close();
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

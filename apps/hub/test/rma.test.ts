import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { insertDevice, insertJobWithStartIntent, insertSite, setLifecycle } from '@fleet/db';
import type { FleetLifecycleState } from '@fleet/domain';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

interface RmaAnswer {
  id: string;
  state: string;
  operator_moves: string[];
  vendor_case_id: string | null;
  history: { from: string | null; to: string; at: string; by: string; reason: string; job_id: string | null }[];
  job: { id: string; kind: string; state: string; params: Record<string, unknown> } | null;
}

// The RMA API over a hub without Temporal: cases and the jobs their moves start, as the projection holds them.
describe('RMA cases in the API', () => {
  let hub: TestHub;
  let n = 0;

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, token: string, body?: object) =>
    hub.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(body ? { payload: body } : {}) });
  const device = async (...states: FleetLifecycleState[]) => {
    const { id } = await insertDevice(hub.handle.db, { name: `tray-${++n}`, siteId: 'rma' });
    for (const to of states)
      await setLifecycle(hub.handle.db, {
        deviceId: id,
        to,
        writer: 'lifecycle-workflow',
        jobId: randomUUID(),
        reason: 'Test',
      });
    return id;
  };
  const open = async (deviceId: string) => {
    const res = await call('POST', '/v1/rma', hub.tokens.operator, {
      device_id: deviceId,
      failed_part: 'GPU_2',
      reason: 'XID 79 after every reset',
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as RmaAnswer;
  };
  const deviceJobs = async (deviceId: string) =>
    (await call('GET', `/v1/jobs?device_id=${deviceId}`, hub.tokens.viewer)).json().items as { id: string }[];
  const audit = async (query: string) =>
    (await call('GET', `/v1/audit?${query}`, hub.tokens.viewer)).json().items as {
      actor: string;
      action: string;
      target: string;
      outcome: string;
      status_code: number;
      job_id: string | null;
      details: Record<string, unknown> | null;
    }[];

  before(async () => {
    hub = await startTestHub();
    await insertSite(hub.handle.db, { id: 'rma', name: 'RMA' });
  });
  after(() => hub.close());

  it('ships a case: a device.rma_ship job, its start intent, the case moved and one audit row, together', async () => {
    const id = await device('quarantined');
    const c = await open(id);
    assert.equal(c.state, 'open');
    assert.deepEqual(c.operator_moves, ['shipped', 'closed']);
    assert.equal(c.history[0]?.by, 't-operator');
    const again = await call('POST', '/v1/rma', hub.tokens.operator, { device_id: id, failed_part: 'x', reason: 'y' });
    assert.equal(again.statusCode, 409, again.body);
    assert.match(again.json().error.message, new RegExp(`has RMA case ${c.id} open`));

    const url = `/v1/rma/${c.id}`;
    const noReason = await call('PATCH', url, hub.tokens.operator, { state: 'shipped' });
    assert.equal(noReason.statusCode, 400, noReason.body);
    assert.equal(noReason.json().error.details[0].field, 'body.reason');
    const early = await call('PATCH', url, hub.tokens.operator, { state: 'replaced', reason: 'r' });
    assert.equal(early.statusCode, 409, early.body);
    assert.match(early.json().error.message, /case is open: it cannot move to replaced/);
    assert.equal((await call('PATCH', url, hub.tokens.viewer, { vendor_case_id: 'x' })).statusCode, 403);

    const reason = 'NVIDIA case opened, tray packed';
    const res = await call('PATCH', url, hub.tokens.operator, {
      state: 'shipped',
      reason,
      vendor_case_id: 'NV-123',
    });
    assert.equal(res.statusCode, 202, res.body);
    const shipped = res.json() as RmaAnswer;
    const job = shipped.job!;
    assert.equal(res.headers['location'], `/v1/jobs/${job.id}`);
    assert.equal(shipped.state, 'shipped');
    assert.equal(shipped.vendor_case_id, 'NV-123');
    assert.deepEqual(shipped.operator_moves, ['replaced']);
    assert.equal(job.kind, 'device.rma_ship');
    assert.equal(job.state, 'queued');
    assert.deepEqual(job.params, { reason, return_to: 'rma', already_quarantined: true, rma_case_id: c.id });
    assert.deepEqual(shipped.history.at(-1), {
      from: 'open',
      to: 'shipped',
      at: shipped.history.at(-1)?.at,
      by: 't-operator',
      reason,
      job_id: job.id,
    });
    const intent = await hub.handle.db.$client.query('select kind from intents where job_id = $1', [job.id]);
    assert.deepEqual(intent.rows, [{ kind: 'start' }]);
    const rows = await audit(`target=device/${id}&action=rma.shipped`);
    assert.deepEqual(
      rows.map((a) => [a.actor, a.action, a.outcome, a.status_code, a.job_id]),
      [['t-operator', 'rma.shipped', 'accepted', 202, job.id]],
    );
    assert.deepEqual(rows[0]!.details?.['params'], job.params);

    // Asked again: the case is shipped already, nothing more happens.
    const repeat = await call('PATCH', url, hub.tokens.operator, { state: 'shipped', reason });
    assert.equal(repeat.statusCode, 200, repeat.body);
    assert.equal(repeat.json().job, null);
    assert.equal((await deviceJobs(id)).length, 1);

    // The return needs the device at the vendor (rma): the shipping job has not run here.
    const back = await call('PATCH', url, hub.tokens.operator, { state: 'replaced', reason: 'new GPU fitted' });
    assert.equal(back.statusCode, 409, back.body);
    assert.match(back.json().error.message, /is quarantined: only a device in rma can be taken back/);
    const revalidate = await call('PATCH', url, hub.tokens.operator, { state: 'closed', reason: 'r' });
    assert.equal(revalidate.statusCode, 409, revalidate.body);

    const list = await call('GET', `/v1/rma?device_id=${id}&state=shipped`, hub.tokens.viewer);
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(
      (list.json().items as RmaAnswer[]).map((i) => [i.id, i.state]),
      [[c.id, 'shipped']],
    );
    const none = await call('GET', `/v1/rma?device_id=${id}&state=closed`, hub.tokens.viewer);
    assert.deepEqual(none.json().items, []);
    assert.equal((await call('GET', '/v1/rma?state=lost', hub.tokens.viewer)).statusCode, 400);
    assert.equal((await call('GET', `/v1/rma/${randomUUID()}`, hub.tokens.viewer)).statusCode, 404);
  });

  it('moves nothing when the job cannot be made: a device in the wrong state, or busy with another job', async () => {
    const discovered = await device();
    const c1 = await open(discovered);
    const wrong = await call('PATCH', `/v1/rma/${c1.id}`, hub.tokens.operator, { state: 'shipped', reason: 'r' });
    assert.equal(wrong.statusCode, 409, wrong.body);
    assert.match(
      wrong.json().error.message,
      /is discovered: only a device in failed, quarantined, remediating can be shipped/,
    );

    const busy = await device('quarantined');
    await insertJobWithStartIntent(hub.handle.db, {
      kind: 'device.remediate',
      siteId: 'rma',
      deviceId: busy,
      params: {},
      createdBy: 'test',
    });
    const c2 = await open(busy);
    const res = await call('PATCH', `/v1/rma/${c2.id}`, hub.tokens.operator, { state: 'shipped', reason: 'r' });
    assert.equal(res.statusCode, 409, res.body);
    assert.match(res.json().error.message, /already has an active job/);
    const after = await call('GET', `/v1/rma/${c2.id}`, hub.tokens.viewer);
    assert.equal(after.json().state, 'open', 'the case did not move without its job');
    assert.equal((await deviceJobs(busy)).length, 1);

    // Closing an open case makes no job: misdiagnosed.
    const closed = await call('PATCH', `/v1/rma/${c1.id}`, hub.tokens.operator, {
      state: 'closed',
      reason: 'the GPU was fine: a driver bug',
    });
    assert.equal(closed.statusCode, 200, closed.body);
    assert.equal(closed.json().state, 'closed');
    assert.equal(closed.json().job, null);
    assert.equal((await deviceJobs(discovered)).length, 0);
    const [row] = await audit(`target=device/${discovered}&action=rma.closed`);
    assert.deepEqual(row?.details, {
      rma_case_id: c1.id,
      from: 'open',
      to: 'closed',
      reason: 'the GPU was fine: a driver bug',
    });
  });
});

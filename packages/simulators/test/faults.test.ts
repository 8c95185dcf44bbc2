import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { profiles } from '../src/redfish/profiles/index.js';
import {
  admin,
  buildPackage,
  finishedTask,
  PASSWORD,
  push,
  rf,
  sleep,
  startSim,
  USER,
  type TestSim,
} from './helpers.js';

const FW = profiles['gb200-compute'].firmware[0]!;
const pkg = () =>
  buildPackage(
    [{ uuid: FW.device!, components: [0] }],
    [{ identifier: FW.componentId!, stamp: FW.stamp + 1, version: 'GB200Nvl-26.01-1' }],
  );

describe('fault injection through the admin API', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([{ id: 'f1' }, { id: 'f2' }, { id: 'f3' }], {
      timeScale: 0.001,
      timings: { firmwareUpdateS: 300, bmcRebootS: 200 },
    });
  });
  after(() => t.close());

  const setFaults = async (id: string, faults: unknown) => {
    const res = await admin(t, 'PUT', `/bmcs/${id}/faults`, faults);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const clear = (id: string) => admin(t, 'DELETE', `/bmcs/${id}/faults`);

  it('latency delays every answer', async () => {
    await setFaults('f1', { latencyMs: 150 });
    const started = Date.now();
    assert.equal((await rf(t.url('f1'), 'GET', '/redfish/v1')).status, 200);
    assert.ok(Date.now() - started >= 140);
    await clear('f1');
  });

  it('an error rate answers 5xx with a Base error body', async () => {
    await setFaults('f1', { errorRate: 1 });
    const res = await rf(t.url('f1'), 'GET', '/redfish/v1/Systems');
    assert.equal(res.status, 500);
    assert.match(res.body.error.code, /InternalError$/);
    await setFaults('f1', { errorRate: 1, errorStatus: 503 });
    const busy = await rf(t.url('f1'), 'GET', '/redfish/v1/Systems');
    assert.equal(busy.status, 503);
    assert.equal(busy.headers.get('retry-after'), '5');
    await clear('f1');
    assert.equal((await rf(t.url('f1'), 'GET', '/redfish/v1/Systems')).status, 200);
  });

  it('connection resets drop the request without an answer and are logged with status 0', async () => {
    await admin(t, 'DELETE', '/bmcs/f1/requests');
    await setFaults('f1', { resetRate: 1 });
    await assert.rejects(fetch(`${t.url('f1')}/redfish/v1`));
    await clear('f1');
    const log = (await admin(t, 'GET', '/bmcs/f1/requests')).body.items;
    assert.deepEqual(
      log.map((r: { status: number }) => r.status),
      [0],
    );
  });

  it('a hang holds requests until the fault is cleared', async () => {
    await setFaults('f2', { hang: true });
    let settled = false;
    const pending = rf(t.url('f2'), 'GET', '/redfish/v1').then((r) => {
      settled = true;
      return r;
    });
    await sleep(200);
    assert.equal(settled, false);
    await clear('f2');
    assert.equal((await pending).status, 200);
  });

  it('a hung request the client gives up on is dropped', async () => {
    await setFaults('f2', { hang: true });
    await assert.rejects(fetch(`${t.url('f2')}/redfish/v1`, { signal: AbortSignal.timeout(100) }));
    await clear('f2');
    assert.equal((await rf(t.url('f2'), 'GET', '/redfish/v1')).status, 200);
  });

  it('a stale link 404s until the client re-reads the service root', async () => {
    await setFaults('f2', { staleLinks: ['/redfish/v1/Systems/System_0'] });
    assert.equal((await rf(t.url('f2'), 'GET', '/redfish/v1/Systems/System_0')).status, 404);
    assert.equal((await rf(t.url('f2'), 'GET', '/redfish/v1/Systems/System_0')).status, 404);
    assert.equal((await rf(t.url('f2'), 'GET', '/redfish/v1')).status, 200);
    assert.equal((await rf(t.url('f2'), 'GET', '/redfish/v1/Systems/System_0')).status, 200);
    await clear('f2');
  });

  it('session exhaustion refuses logins with SessionLimitExceeded', async () => {
    await setFaults('f2', { sessionExhaustion: true });
    const res = await rf(t.url('f2'), 'POST', '/redfish/v1/SessionService/Sessions', {
      auth: null,
      body: { UserName: USER, Password: PASSWORD },
    });
    assert.equal(res.status, 503);
    assert.match(res.body.error.code, /SessionLimitExceeded$/);
    await clear('f2');
    assert.equal(
      (
        await rf(t.url('f2'), 'POST', '/redfish/v1/SessionService/Sessions', {
          auth: null,
          body: { UserName: USER, Password: PASSWORD },
        })
      ).status,
      201,
    );
  });

  it('task failure ends the update in Exception with Update ApplyFailed', async () => {
    await setFaults('f3', { taskFailure: true });
    const res = await push(t.url('f3'), { Targets: [] }, pkg());
    const task = await finishedTask(t.url('f3'), res.headers.get('location')!);
    assert.equal(task.TaskState, 'Exception');
    assert.ok(task.Messages.some((m: { MessageId: string }) => /^Update\.1\.\d+\.ApplyFailed$/.test(m.MessageId)));
    await clear('f3');
  });

  it('a BMC reboot in the middle of an update interrupts the task and answers 503 while down', async () => {
    await setFaults('f3', { rebootDuringUpdate: true });
    const res = await push(t.url('f3'), { Targets: [] }, pkg());
    const location = res.headers.get('location')!;
    let down;
    for (let i = 0; i < 200 && !down; i++) {
      const r = await rf(t.url('f3'), 'GET', location);
      if (r.status === 503) down = r;
      else await sleep(10);
    }
    assert.ok(down, 'the BMC went away');
    assert.ok(Number(down.headers.get('retry-after')) >= 1);
    await clear('f3');
    const task = await finishedTask(t.url('f3'), location);
    assert.equal(task.TaskState, 'Interrupted');
    assert.ok(task.PercentComplete < 100);
    const fw = (await admin(t, 'GET', '/bmcs/f3/firmware')).body.items.find((i: { id: string }) => i.id === FW.id);
    assert.equal(fw.version, FW.version, JSON.stringify(fw));
    assert.equal(fw.staged, undefined);
  });

  it('rejects malformed fault settings', async () => {
    const res = await admin(t, 'PUT', '/bmcs/f1/faults', { errorRate: 3 });
    assert.equal(res.status, 400);
    assert.equal((await admin(t, 'PUT', '/bmcs/f1/faults', { bogus: true })).status, 400);
  });

  it('reports faults on the BMC resource', async () => {
    await setFaults('f1', { latencyMs: 1 });
    assert.deepEqual((await admin(t, 'GET', '/bmcs/f1')).body.faults, { latencyMs: 1 });
    await clear('f1');
    assert.deepEqual((await admin(t, 'GET', '/bmcs/f1')).body.faults, {});
  });
});

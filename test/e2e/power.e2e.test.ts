import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection, Client } from '@temporalio/client';
import { historyText } from '../harness/history.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface JobBody {
  id: string;
  state: string;
  kind: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  result: { powerState?: string; resetSent?: boolean } | null;
  error: { code: string; message: string } | null;
  links: { self: string; temporal_ui: string | null };
}

describe('walking skeleton: power on across real processes', () => {
  const stack = new Stack({ bmcs: 2, timeScale: 0.02 });
  before(() => stack.start(), { timeout: 120_000 });
  after(() => stack.stop(), { timeout: 60_000 });

  it('POST power on answers 202 with a queued job, and the job then succeeds with the device On', async () => {
    const deviceId = stack.deviceIds.get('bmc-0001')!;
    const before = await stack
      .api('GET', `/v1/devices/${deviceId}`, undefined, stack.tokens.viewer)
      .then(expectStatus(200));
    assert.equal((before.body as { power_state: string }).power_state, 'Unknown');

    const res = await stack
      .api('POST', `/v1/devices/${deviceId}/power`, { action: 'on' }, stack.tokens.operator)
      .then(expectStatus(202));
    const job = res.body as JobBody;
    assert.equal(res.headers.get('location'), `/v1/jobs/${job.id}`);
    assert.equal(job.kind, 'device.power');
    assert.ok(['queued', 'running'].includes(job.state));
    assert.match(job.links.temporal_ui ?? '', new RegExp(`/workflows/${job.id}$`));

    const done = (await stack.waitForJob(job.id)) as unknown as JobBody;
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.ok(done.started_at && done.finished_at);
    assert.ok(Date.parse(done.created_at) <= Date.parse(done.started_at!));
    assert.ok(Date.parse(done.started_at!) <= Date.parse(done.finished_at!));
    assert.deepEqual(
      { powerState: done.result?.powerState, resetSent: done.result?.resetSent },
      { powerState: 'On', resetSent: true },
    );

    const device = await stack
      .api('GET', `/v1/devices/${deviceId}`, undefined, stack.tokens.viewer)
      .then(expectStatus(200));
    assert.equal((device.body as { power_state: string }).power_state, 'On');

    // The BMC got exactly one reset, with the RMS mapping for "on".
    const resets = (await stack.simRequests('bmc-0001')).filter((r) => r.method === 'POST');
    assert.deepEqual(
      resets.map((r) => [r.path, r.body, r.status]),
      [['/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset', { ResetType: 'On' }, 204]],
    );
    // The other BMC was never touched.
    assert.equal((await stack.simRequests('bmc-0002')).length, 0);
  });

  it('the intent, its job and its audit row were written together, with the request id', async () => {
    const deviceId = stack.deviceIds.get('bmc-0002')!;
    const requestId = `req-${Date.now()}`;
    const res = await stack.api(
      'POST',
      `/v1/devices/${deviceId}/power`,
      { action: 'force-off' },
      stack.tokens.operator,
      { 'x-request-id': requestId },
    );
    expectStatus(202)(res);
    assert.equal(res.headers.get('x-request-id'), requestId);
    const job = res.body as JobBody;
    const { rows } = await stack.dbHandle.pool.query(
      `select a.actor, a.role, a.action, a.target, a.outcome, a.status_code, i.kind as intent_kind,
         a.at = j.created_at as same_tx
       from audit_log a join jobs j on j.id = a.job_id join intents i on i.job_id = j.id where a.request_id = $1`,
      [requestId],
    );
    assert.deepEqual(rows, [
      {
        actor: 'test-operator',
        role: 'operator',
        action: 'device.power',
        target: `device/${deviceId}`,
        outcome: 'accepted',
        status_code: 202,
        intent_kind: 'start',
        same_tx: true,
      },
    ]);
    const done = (await stack.waitForJob(job.id)) as unknown as JobBody;
    assert.equal(done.state, 'succeeded');
    // Already off: nothing was sent to the BMC.
    assert.equal(done.result?.resetSent, false);
    assert.equal((await stack.simRequests('bmc-0002')).filter((r) => r.method === 'POST').length, 0);
  });

  it('no BMC secret reaches Postgres, Temporal history or any log', async () => {
    const dump = await stack.dbHandle.pool.query(
      `select string_agg(t::text, ' ') as all from (
         select row_to_json(x)::text as t from jobs x union all select row_to_json(x)::text from devices x
         union all select row_to_json(x)::text from intents x
         union all select row_to_json(x)::text from audit_log x) s`,
    );
    assert.ok(!String(dump.rows[0].all).includes(stack.bmcPassword), 'password found in Postgres');
    const connection = await Connection.connect({ address: stack.temporal.address });
    try {
      const client = new Client({ connection });
      const { rows } = await stack.dbHandle.pool.query<{ id: string }>('select id from jobs');
      assert.ok(rows.length >= 2);
      for (const { id } of rows) {
        const history = historyText(await client.workflow.getHandle(id).fetchHistory());
        assert.ok(history.includes('credentialRef'), 'history should carry the credential reference');
        assert.ok(!history.includes(stack.bmcPassword), `password found in history of ${id}`);
        assert.ok(!history.includes(Buffer.from(`admin:${stack.bmcPassword}`).toString('base64')));
      }
    } finally {
      await connection.close();
    }
    for (const p of [stack.hub, stack.agent, stack.satellite]) {
      assert.ok(p.output.length > 0);
      assert.ok(!p.output.includes(stack.bmcPassword), `password found in ${p.name} log`);
    }
  });

  it('logs are structured JSON carrying job and workflow IDs', async () => {
    const lines = stack.satellite.output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const reset = lines.find((l) => l['msg'] === 'reset sent');
    assert.ok(reset, 'satellite logged the reset');
    assert.ok(typeof reset['deviceId'] === 'string' && typeof reset['workflowId'] === 'string');
  });
});

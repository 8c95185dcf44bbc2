import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createApiToken, insertDevice, insertSite, racks, setLifecycle, type DbHandle } from '@fleet/db';
import { HubConfig } from '../src/config.js';
import { FacilityFollower } from '../src/services/facility-follower.js';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

interface EventBody {
  id: string;
  source: string;
  state: string;
  grading: { response: string; approval: string | null; steps: string[] };
  racks: {
    rack_id: string;
    quarantine: { device_id: string; name: string; job_id: string | null; skipped: string | null }[] | null;
    power_off: { job_id: string | null; refused: string | null; outcome: string | null } | null;
  }[];
  job_ids: string[];
  decision: { action: string; by: string; reason: string } | null;
}
interface AuditBody {
  action: string;
  actor: string;
  role: string | null;
  job_id: string | null;
  details: Record<string, unknown> | null;
}

// Facility events (docs/day2.md): a building management system's token posts them, the hub grades each, holds the
// racks' devices, and powers the racks off (rack.power off, overriding the holds) once approved, or at once for an
// event marked critical. The jobs do not run here (no Temporal): the test ends them as the workflow agent would.
describe('facility events', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let tokens: TestHub['tokens'] & { facility: string };
  let follower: FacilityFollower;
  const rack: Record<'leak' | 'critical' | 'cooling' | 'reject' | 'blocked', string> = {
    leak: '',
    critical: '',
    cooling: '',
    reject: '',
    blocked: '',
  };
  /** Device ids per rack, power shelf, switch tray and compute trays. */
  const devicesOf: Record<string, string[]> = {};

  before(async () => {
    hub = await startTestHub();
    ({ handle, app } = hub);
    const remediation = HubConfig.shape.remediation.parse(undefined);
    follower = new FacilityFollower(handle.db, remediation, app.log);
    tokens = { ...hub.tokens, facility: (await createApiToken(handle.db, 'bms-1', 'facility')).token };
    const db = handle.db;
    await insertSite(db, { id: 'fac', name: 'Facility' });
    for (const r of Object.keys(rack) as (keyof typeof rack)[]) {
      rack[r] = (await db.insert(racks).values({ siteId: 'fac', name: r, rackType: 'gb200_nvl72' }).returning())[0]!.id;
      const ids: string[] = [];
      for (const [name, nodeType] of [
        ['ps0', 'powershelf_gb200_liteon'],
        ['sw0', 'switch_gb200_nvidia'],
        ['ct0', 'compute_gb200_nvidia'],
        ['ct1', 'compute_gb200_nvidia'],
      ] as const) {
        const d = await insertDevice(db, {
          name: `${r}-${name}`,
          siteId: 'fac',
          rackId: rack[r],
          nodeType,
          bmcUrl: 'http://127.0.0.1:9000',
          credentialRef: 'bmc/default',
        });
        ids.push(d.id);
      }
      devicesOf[rack[r]] = ids;
    }
  });
  after(() => hub.close());

  const call = (method: 'GET' | 'POST', url: string, token: string, body?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  const post = (body: Record<string, unknown>, token = tokens.facility) =>
    call('POST', '/v1/facility-events', token, body);
  const event = (rackId: string, extra: Record<string, unknown> = {}) => ({
    external_id: randomUUID(),
    kind: 'leak',
    severity: 'warning',
    rack_ids: [rackId],
    location: 'row 12',
    message: 'water under the rack',
    ...extra,
  });
  const auditOf = async (id: string) => {
    const res = await call('GET', `/v1/audit?target=facility-event/${id}&limit=100`, tokens.viewer);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().items as AuditBody[]).reverse();
  };
  const newestAudit = async (action: string, target: string) => {
    const res = await call('GET', `/v1/audit?action=${action}&target=${target}&limit=1`, tokens.viewer);
    return res.json().items[0] as AuditBody | undefined;
  };
  const jobsWhere = async (where: string, args: unknown[]) =>
    (
      await handle.pool.query<{ id: string; kind: string; state: string; device_id: string | null; params: never }>(
        `select id, kind, state, device_id, params from jobs where ${where} order by created_at`,
        args,
      )
    ).rows;
  /** Ends a job and its children as the workflow agent's projection would. */
  const endJob = (id: string, state: 'succeeded' | 'failed') =>
    handle.pool.query(`update jobs set state = $2, finished_at = now() where id = $1 or parent_id = $1`, [id, state]);
  /** What the quarantine workflow does once its job ran: the device held, the job succeeded. */
  const holdAsTheWorkflowWould = async (jobId: string, deviceId: string) => {
    await setLifecycle(handle.db, {
      deviceId,
      to: 'quarantined',
      writer: 'lifecycle-workflow',
      jobId,
      reason: 'Quarantined',
    });
    await endJob(jobId, 'succeeded');
  };

  it('lets a facility token post events and read its own, and nothing else', async () => {
    const devices = await call('GET', '/v1/devices', tokens.facility);
    assert.equal(devices.statusCode, 403, devices.body);
    assert.match(devices.json().error.message, /needs the viewer role; token bms-1 has facility/);
    const byOperator = await post(event(rack.cooling, { severity: 'info' }), tokens.operator);
    assert.equal(byOperator.statusCode, 403);
    assert.match(byOperator.json().error.message, /needs the facility role/);

    const mine = await post(event(rack.cooling, { severity: 'info', kind: 'cooling' }));
    assert.equal(mine.statusCode, 201, mine.body);
    const admins = await post(event(rack.cooling, { severity: 'info', kind: 'other' }), tokens.admin);
    assert.equal(admins.statusCode, 201, admins.body);
    assert.equal(admins.json().source, 't-admin');
    assert.equal(mine.headers['location'], `/v1/facility-events/${mine.json().id}`);
    assert.equal(mine.json().state, 'recorded');
    assert.deepEqual(mine.json().job_ids, []);

    const own = await call('GET', '/v1/facility-events', tokens.facility);
    assert.equal(own.statusCode, 200, own.body);
    assert.deepEqual(
      own.json().items.map((e: EventBody) => e.id),
      [mine.json().id],
    );
    const other = await call('GET', `/v1/facility-events/${admins.json().id}`, tokens.facility);
    assert.equal(other.statusCode, 404);
    const asViewer = await call('GET', `/v1/facility-events/${admins.json().id}`, tokens.viewer);
    assert.equal(asViewer.statusCode, 200);
    const approve = await call('POST', `/v1/facility-events/${mine.json().id}/approve`, tokens.facility, {
      reason: 'x',
    });
    assert.equal(approve.statusCode, 403);
  });

  it('refuses a bad body with 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...event(rack.leak), kind: undefined }, 'body.kind'],
      [{ ...event(rack.leak), severity: 'severe' }, 'body.severity'],
      [{ ...event(rack.leak), rack_ids: [] }, 'body.rack_ids'],
      [{ ...event(rack.leak), rack_ids: ['not-a-rack'] }, 'body.rack_ids.0'],
      [{ ...event(rack.leak), rack_ids: [rack.leak, randomUUID()] }, 'body.rack_ids.1'],
      [{ ...event(rack.leak), message: ' ' }, 'body.message'],
      [{ ...event(rack.leak), external_id: undefined }, 'body.external_id'],
      [{ ...event(rack.leak), occurred_at: 'yesterday' }, 'body.occurred_at'],
      [{ ...event(rack.leak), critical: 'yes' }, 'body.critical'],
      [{ ...event(rack.leak), building: 'B' }, 'body'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      assert.equal(res.statusCode, 400, `${field}: ${res.body}`);
      assert.equal(res.json().error.details[0].field, field, res.body);
    }
    const none = await jobsWhere('rack_id = $1 or device_id = any($2)', [rack.leak, devicesOf[rack.leak]]);
    assert.deepEqual(none, []);
  });

  it('a warning holds every device of the rack but those held or busy already', async () => {
    const [ps0, sw0, ct0, ct1] = devicesOf[rack.cooling]!;
    await setLifecycle(handle.db, {
      deviceId: ct1!,
      to: 'quarantined',
      writer: 'lifecycle-workflow',
      jobId: randomUUID(),
      reason: 'OperatorQuarantine',
    });
    const busy = await call('POST', `/v1/devices/${ct0}/power`, tokens.operator, { action: 'on' });
    assert.equal(busy.statusCode, 202, busy.body);

    const res = await post(event(rack.cooling, { kind: 'cooling', severity: 'warning', message: 'CRAH 3 failed' }));
    assert.equal(res.statusCode, 201, res.body);
    const e = res.json() as EventBody;
    assert.equal(e.state, 'quarantined');
    assert.deepEqual(e.grading.steps, ['quarantine']);
    const q = e.racks[0]!.quarantine!;
    const byId = new Map(q.map((d) => [d.device_id, d]));
    for (const id of [ps0!, sw0!]) assert.ok(byId.get(id)!.job_id, `${id} has a quarantine job`);
    assert.match(byId.get(ct0!)!.skipped!, /already has an active job/);
    assert.match(byId.get(ct1!)!.skipped!, /is quarantined already/);
    const jobs = await jobsWhere(`kind = 'device.quarantine' and device_id = any($1)`, [devicesOf[rack.cooling]]);
    assert.deepEqual(jobs.map((j) => j.device_id).sort(), [ps0!, sw0!].sort());
    assert.deepEqual(e.job_ids.sort(), jobs.map((j) => j.id).sort());
    const params = jobs[0]!.params as { reason: string };
    assert.match(
      params.reason,
      new RegExp(`^facility event ${e.id} \\(cooling, warning\\) from bms-1 at row 12: CRAH 3`),
    );

    const audit = await auditOf(e.id);
    assert.deepEqual(
      audit.map((a) => a.action),
      ['facility.event.received', 'facility.event.graded', 'facility.quarantine'],
    );
    assert.ok(audit.every((a) => a.actor === 'bms-1' && a.role === 'facility'));
    assert.equal(audit[1]!.details!['response'], 'quarantine');
    const deviceRow = await newestAudit('device.quarantine', `device/${ps0}`);
    assert.equal(deviceRow?.actor, 'bms-1');
  });

  it('a leak holds the rack, waits for approval, then powers it off in order, the event as override', async () => {
    const res = await post(event(rack.leak));
    assert.equal(res.statusCode, 201, res.body);
    const e = res.json() as EventBody;
    assert.equal(e.state, 'awaiting_approval');
    assert.deepEqual(e.grading, {
      response: 'power_off',
      approval: 'operator',
      steps: ['quarantine', 'power_off'],
      rule: "leak at warning: hold the racks' devices, then power the racks off once an operator approves",
    });
    const q = e.racks[0]!.quarantine!;
    assert.equal(q.filter((d) => d.job_id).length, 4);
    assert.equal(e.racks[0]!.power_off, null);
    assert.deepEqual(await jobsWhere(`kind = 'rack.power' and rack_id = $1`, [rack.leak]), []);

    // The quarantine jobs still run: the rack's devices are busy, so nothing starts and nothing is kept.
    const early = await call('POST', `/v1/facility-events/${e.id}/approve`, tokens.operator, { reason: 'go' });
    assert.equal(early.statusCode, 409, early.body);
    assert.match(early.json().error.message, /the power-off cannot start now: rack .*busy/);
    assert.equal((await call('GET', `/v1/facility-events/${e.id}`, tokens.viewer)).json().decision, null);
    const refusedRow = await call('GET', `/v1/audit?target=/v1/facility-events/${e.id}/approve`, tokens.viewer);
    assert.deepEqual(
      refusedRow.json().items.map((r: { outcome: string; status_code: number }) => [r.outcome, r.status_code]),
      [['rejected', 409]],
    );

    for (const d of q) await holdAsTheWorkflowWould(d.job_id!, d.device_id);
    const noReason = await call('POST', `/v1/facility-events/${e.id}/approve`, tokens.operator, {});
    assert.equal(noReason.statusCode, 400);
    assert.equal(noReason.json().error.details[0].field, 'body.reason');
    const approved = await call('POST', `/v1/facility-events/${e.id}/approve`, tokens.operator, {
      reason: 'leak confirmed on site',
    });
    assert.equal(approved.statusCode, 200, approved.body);
    const a = approved.json() as EventBody;
    assert.equal(a.state, 'powering_off');
    assert.deepEqual(a.decision && [a.decision.action, a.decision.by, a.decision.reason], [
      'approve',
      't-operator',
      'leak confirmed on site',
    ]);
    const [power] = await jobsWhere(`kind = 'rack.power' and rack_id = $1`, [rack.leak]);
    assert.equal(a.racks[0]!.power_off!.job_id, power!.id);
    assert.deepEqual(power!.params, { op: 'off', facility_event: e.id });
    assert.equal((await jobsWhere('parent_id = $1', [power!.id])).length, 4);
    const rackRow = await newestAudit('rack.power', `rack/${rack.leak}`);
    const override = rackRow!.details!['override_quarantine'] as { reason: string; devices: unknown[] };
    assert.match(override.reason, new RegExp(`^facility event ${e.id} \\(leak, warning\\)`));
    assert.equal(override.devices.length, 4, 'the held devices it let through');

    const again = await call('POST', `/v1/facility-events/${e.id}/approve`, tokens.operator, { reason: 'twice' });
    assert.equal(again.statusCode, 409);
    assert.match(again.json().error.message, /is powering_off: approved by t-operator/);

    assert.equal(await follower.tick(), 0, 'nothing moves while the power-off runs');
    await endJob(power!.id, 'succeeded');
    await follower.tick();
    const done = (await call('GET', `/v1/facility-events/${e.id}`, tokens.viewer)).json() as EventBody;
    assert.equal(done.state, 'done');
    assert.equal(done.racks[0]!.power_off!.outcome, 'succeeded');

    const audit = await auditOf(e.id);
    assert.deepEqual(
      audit.map((r) => r.action),
      [
        'facility.event.received',
        'facility.event.graded',
        'facility.quarantine',
        'facility.event.approve',
        'facility.power_off',
        'facility.power_off.ended',
      ],
    );
    assert.equal(audit[4]!.details!['approval'], 'approved by t-operator: leak confirmed on site');
    assert.equal(audit[4]!.actor, 't-operator');
  });

  it('a critical event powers off at once, says so in the audit log, and holds the devices once it ended', async () => {
    const res = await post(event(rack.critical, { critical: true, message: 'leak at the manifold' }));
    assert.equal(res.statusCode, 201, res.body);
    const e = res.json() as EventBody;
    assert.equal(e.state, 'powering_off');
    assert.equal(e.decision, null);
    assert.deepEqual(e.grading.steps, ['power_off', 'quarantine']);
    assert.equal(e.racks[0]!.quarantine, null);
    const [power] = await jobsWhere(`kind = 'rack.power' and rack_id = $1`, [rack.critical]);
    assert.equal(e.racks[0]!.power_off!.job_id, power!.id);
    assert.deepEqual(power!.params, { op: 'off', facility_event: e.id });
    const rackRow = await newestAudit('rack.power', `rack/${rack.critical}`);
    assert.match(
      (rackRow!.details!['override_quarantine'] as { reason: string }).reason,
      /\(leak, warning, critical\) from bms-1 at row 12: leak at the manifold/,
    );
    let audit = await auditOf(e.id);
    const powerOff = audit.find((r) => r.action === 'facility.power_off')!;
    assert.equal(powerOff.details!['approval'], 'critical: powered off without approval');
    assert.deepEqual(powerOff.details!['racks'], [{ rack_id: rack.critical, job_id: power!.id }]);
    const approve = await call('POST', `/v1/facility-events/${e.id}/approve`, tokens.operator, { reason: 'x' });
    assert.equal(approve.statusCode, 409, 'nothing awaits an approval');

    await endJob(power!.id, 'succeeded');
    await follower.tick();
    const done = (await call('GET', `/v1/facility-events/${e.id}`, tokens.viewer)).json() as EventBody;
    assert.equal(done.state, 'done');
    const q = done.racks[0]!.quarantine!;
    assert.equal(q.filter((d) => d.job_id).length, 4);
    const holds = await jobsWhere(`kind = 'device.quarantine' and device_id = any($1)`, [devicesOf[rack.critical]]);
    assert.equal(holds.length, 4);
    assert.deepEqual(done.job_ids.sort(), [power!.id, ...holds.map((j) => j.id)].sort());
    audit = await auditOf(e.id);
    assert.deepEqual(
      audit.map((r) => r.action),
      [
        'facility.event.received',
        'facility.event.graded',
        'facility.power_off',
        'facility.power_off.ended',
        'facility.quarantine',
      ],
    );
    assert.equal(await follower.tick(), 0, 'an event moves once');
  });

  it('a critical event whose power-off cannot start waits for an operator, who starts it once it can', async () => {
    const busy = await call('POST', `/v1/racks/${rack.blocked}/power`, tokens.operator, { op: 'on' });
    assert.equal(busy.statusCode, 202, busy.body);
    const res = await post(event(rack.blocked, { critical: true }));
    assert.equal(res.statusCode, 201, res.body);
    const e = res.json() as EventBody;
    assert.equal(e.state, 'awaiting_approval');
    assert.match(e.racks[0]!.power_off!.refused!, /busy|already has a power sequence/);
    assert.equal(e.racks[0]!.power_off!.job_id, null);
    const refused = (await auditOf(e.id)).find((r) => r.action === 'facility.power_off')!;
    assert.equal(refused.details!['approval'], 'critical: powered off without approval');
    assert.match((refused.details!['racks'] as { refused: string }[])[0]!.refused, /busy|power sequence/);

    await endJob(busy.json().id, 'succeeded');
    const approved = await call('POST', `/v1/facility-events/${e.id}/approve`, tokens.operator, {
      reason: 'the power-on is done; cut it',
    });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.json().state, 'powering_off');
    const [power] = await jobsWhere(`kind = 'rack.power' and rack_id = $1 and params->>'op' = 'off'`, [rack.blocked]);
    assert.equal(approved.json().racks[0].power_off.job_id, power!.id);
    const started = (await auditOf(e.id)).filter((r) => r.action === 'facility.power_off').at(-1)!;
    assert.equal(started.details!['approval'], 'approved by t-operator: the power-on is done; cut it');

    await endJob(power!.id, 'failed');
    await follower.tick();
    const ended = (await call('GET', `/v1/facility-events/${e.id}`, tokens.viewer)).json() as EventBody;
    assert.equal(ended.state, 'failed', 'a power-off that failed');
    assert.equal(ended.racks[0]!.power_off!.outcome, 'failed');
    assert.equal(ended.racks[0]!.quarantine!.filter((d) => d.job_id).length, 4, 'the devices are held all the same');
  });

  it('answers a repeat of an external id with the first event, and refuses the id for another event', async () => {
    const body = event(rack.critical, { kind: 'cooling', severity: 'info' });
    const first = await post(body);
    assert.equal(first.statusCode, 201, first.body);
    const repeat = await post({ ...body, message: 'sent again' });
    assert.equal(repeat.statusCode, 200, repeat.body);
    assert.equal(repeat.json().id, first.json().id);
    assert.equal(repeat.json().message, body.message);
    const otherSource = await post(body, tokens.admin);
    assert.equal(otherSource.statusCode, 201, 'ids are per source');
    const changed = await post({ ...body, severity: 'warning' });
    assert.equal(changed.statusCode, 409, changed.body);
    assert.equal(changed.json().error.details[0].field, 'body.external_id');
    const rows = await call('GET', `/v1/facility-events?rack_id=${rack.critical}&kind=cooling`, tokens.viewer);
    assert.equal(rows.json().items.length, 2);
  });

  it('rejecting a power-off leaves the rack on and its devices held', async () => {
    const res = await post(event(rack.reject, { kind: 'smoke' }));
    const e = res.json() as EventBody;
    assert.equal(e.state, 'awaiting_approval');
    const rejected = await call('POST', `/v1/facility-events/${e.id}/reject`, tokens.operator, {
      reason: 'smoke was a cleaning crew',
    });
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.equal(rejected.json().state, 'rejected');
    assert.deepEqual(await jobsWhere(`kind = 'rack.power' and rack_id = $1`, [rack.reject]), []);
    assert.equal((await auditOf(e.id)).at(-1)!.action, 'facility.event.reject');
  });

  it('lists events newest first by state, kind, severity and rack, a page at a time', async () => {
    const q = async (query: string) => {
      const res = await call('GET', `/v1/facility-events?${query}`, tokens.viewer);
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { items: EventBody[]; next_cursor: string | null };
    };
    assert.deepEqual(
      (await q('state=done')).items.map((e) => e.racks[0]!.rack_id),
      [rack.critical, rack.leak],
    );
    assert.deepEqual(
      (await q('state=failed')).items.map((e) => e.racks[0]!.rack_id),
      [rack.blocked],
    );
    assert.equal((await q(`rack_id=${rack.reject}&state=rejected`)).items.length, 1);
    assert.equal((await q('kind=smoke&kind=cooling&severity=warning')).items.length, 2);
    assert.equal((await q('severity=critical')).items.length, 0);
    const all = (await q('limit=100')).items.map((e) => e.id);
    const paged: string[] = [];
    let cursor: string | null = '';
    do {
      const page = await q(`limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...page.items.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(paged, all);
    const bad = await call('GET', '/v1/facility-events?state=burning', tokens.viewer);
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.details[0].field, 'query.state.0');
  });
});

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { components, Job } from '@fleet/client';
import { JOB, jobFixture, startFakeHub, type Answer, type FakeHub, type RecordedRequest } from './helpers/fake-hub.js';

// Day-2 commands against a fake hub: the requests they send (paths, bodies, filters, idempotency keys), how they
// print what the hub answers, and the usage errors that never reach it.

type Schemas = components['schemas'];
const TRAY = '5f0c2f1e-0000-4000-8000-000000000001';
const CASE = 'c0000000-0000-4000-8000-000000000001';
const BREACH = 'b0000000-0000-4000-8000-000000000001';
const EVENT = 'e0000000-0000-4000-8000-000000000001';
const RACK = '7a000000-0000-4000-8000-000000000001';

const job = (overrides: Partial<Job> = {}) =>
  jobFixture({ target: { device_id: TRAY, rack_id: null, site_id: 'dev-01' }, ...overrides });

const health: Schemas['DeviceHealth'] = {
  device_id: TRAY,
  reachable: true,
  credentials_ok: true,
  power_state: 'On',
  faults: [{ class: 'gpu', component: 'GPU_2', severity: 'Critical', message: 'Xid 79: fell off the bus' }],
  observed_at: '2030-01-01T00:05:00.000Z',
  changed_at: '2030-01-01T00:03:00.000Z',
  observations: 3,
};

const rmaCase: Schemas['RmaCase'] = {
  id: CASE,
  device_id: TRAY,
  site_id: 'dev-01',
  state: 'closed',
  operator_moves: [],
  failed_part: 'GPU_2',
  fault_class: 'gpu',
  reason: 'Xid 79',
  vendor_case_id: 'NV-123456',
  opened_by: 'remediation',
  job_id: JOB,
  old_serials: { tray: 'T1', GPU_2: 'G-OLD' },
  new_serials: { tray: 'T1', GPU_2: 'G-NEW' },
  swap: [{ part: 'GPU_2', old: 'G-OLD', new: 'G-NEW' }],
  history: [
    { from: null, to: 'open', at: '2030-01-01T00:10:00.000Z', by: 'remediation', reason: 'Xid 79', job_id: JOB },
    { from: 'open', to: 'shipped', at: '2030-01-02T00:00:00.000Z', by: 'alice', reason: 'picked up', job_id: null },
  ],
  created_at: '2030-01-01T00:10:00.000Z',
  updated_at: '2030-01-05T00:00:00.000Z',
  closed_at: '2030-01-05T00:00:00.000Z',
};

const breach: Schemas['SlaBreach'] = {
  id: BREACH,
  object_type: 'device',
  object_id: TRAY,
  object_name: 'dev-01-r001-ct03',
  site_id: 'dev-01',
  sla_key: 'lifecycle:quarantined',
  watch: 'lifecycle',
  state: 'quarantined',
  job_kind: null,
  limit_s: 259_200,
  since: '2030-01-01T00:00:00.000Z',
  due_at: '2030-01-04T00:00:00.000Z',
  breached_at: '2030-01-04T00:00:10.000Z',
  overdue_s: 10,
  resolved_at: null,
  resolution: null,
  deliveries: [
    {
      id: JOB,
      webhook: 'ops-pager',
      event: 'sla.breached',
      status: 'delivered',
      attempts: 1,
      next_attempt_at: null,
      last_status: 200,
      last_error: null,
      delivered_at: '2030-01-04T00:00:11.000Z',
    },
  ],
};

const facilityEvent: Schemas['FacilityEvent'] = {
  id: EVENT,
  source: 'bms-hall-1',
  external_id: 'bms-4711',
  kind: 'leak',
  severity: 'warning',
  critical: false,
  rack_ids: [RACK],
  location: 'row 12',
  message: 'drip tray wet',
  occurred_at: null,
  received_at: '2030-01-01T00:00:00.000Z',
  grading: { response: 'power_off', approval: 'operator', steps: ['quarantine', 'power_off'], rule: 'leak/warning' },
  state: 'awaiting_approval',
  racks: [{ rack_id: RACK, quarantine: null, power_off: null }],
  job_ids: [],
  decision: null,
  updated_at: '2030-01-01T00:00:00.000Z',
};

/** A hub that records every request and answers from `answers` (by `METHOD path`), jobs from `jobReads`. */
const requests: RecordedRequest[] = [];
let jobReads: Job[] = [];
let answers: Record<string, Answer> = {};
let hub: FakeHub;
const fleetctl = (...args: string[]) => hub.fleetctl(...args);

before(async () => {
  hub = await startFakeHub((q) => {
    if (q.method === 'GET' && q.url === `/v1/jobs/${JOB}`) return { status: 200, body: jobReads.shift() ?? job() };
    return answers[`${q.method} ${q.url.split('?')[0]}`];
  }, requests);
});
after(() => hub.close());
beforeEach(() => {
  requests.length = 0;
  jobReads = [];
  answers = {
    [`POST /v1/devices/${TRAY}/quarantine`]: { status: 202, body: job() },
    [`POST /v1/devices/${TRAY}/remediate`]: { status: 202, body: job({ kind: 'device.remediate' }) },
    [`POST /v1/devices/${TRAY}/release`]: { status: 202, body: job({ kind: 'device.release' }) },
    [`GET /v1/devices/${TRAY}/health`]: { status: 200, body: health },
    'GET /v1/rma': { status: 200, body: { items: [rmaCase], next_cursor: null } },
    [`GET /v1/rma/${CASE}`]: { status: 200, body: rmaCase },
    'POST /v1/rma': {
      status: 201,
      body: { ...rmaCase, state: 'open', operator_moves: ['shipped', 'closed'], swap: null, new_serials: null },
    },
    'GET /v1/sla-breaches': { status: 200, body: { items: [breach], next_cursor: null } },
    [`GET /v1/sla-breaches/${BREACH}`]: { status: 200, body: breach },
    'GET /v1/facility-events': { status: 200, body: { items: [facilityEvent], next_cursor: null } },
  };
});

const sent = () => requests.map((q) => ({ method: q.method, url: q.url, body: q.body }));

describe('device quarantine, remediate, release', () => {
  it('quarantine posts the trimmed reason with an idempotency key and prints the job', async () => {
    const r = await fleetctl('device', 'quarantine', TRAY, '--reason', ' leak under the tray ');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(sent(), [
      {
        method: 'POST',
        url: `/v1/devices/${TRAY}/quarantine`,
        body: { reason: 'leak under the tray', remediate: false },
      },
    ]);
    assert.match(requests[0]!.idempotencyKey!, /^fleetctl-/);
    assert.match(r.stdout, /^ID\s+KIND\s+STATE\s+TARGET/);
    assert.match(r.stdout, new RegExp(`${JOB}\\s+device\\.quarantine\\s+queued\\s+device/${TRAY}`));
    assert.match(r.stderr, new RegExp(`follow it with: fleetctl job wait ${JOB}`));
  });

  it('quarantine --remediate --fault-class, remediate and release send what the hub takes', async () => {
    const args = ['--idempotency-key', 'k1', '-o', 'id'];
    for (const cmd of [
      ['quarantine', TRAY, '--reason', 'hot', '--remediate', '--fault-class', 'thermal', ...args],
      ['remediate', TRAY, '--reason', 'GPU off the bus', '--fault-class', 'gpu', ...args],
      ['remediate', TRAY, '--reason', 'again', ...args],
      ['release', TRAY, '--reason', 'reseated GPU 2', ...args],
    ]) {
      const r = await fleetctl('device', ...cmd);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${JOB}\n`);
    }
    assert.deepEqual(
      requests.map((q) => [q.url.split('/').pop(), q.body, q.idempotencyKey]),
      [
        ['quarantine', { reason: 'hot', remediate: true, fault_class: 'thermal' }, 'k1'],
        ['remediate', { reason: 'GPU off the bus', fault_class: 'gpu' }, 'k1'],
        ['remediate', { reason: 'again' }, 'k1'],
        ['release', { reason: 'reseated GPU 2' }, 'k1'],
      ],
    );
  });

  it('--wait follows the job to its end: 0 when it succeeds, 1 with its error when it fails', async () => {
    jobReads = [job({ state: 'running' }), job({ state: 'succeeded' })];
    const ok = await fleetctl('device', 'quarantine', TRAY, '--reason', 'x', '--wait', '-o', 'json');
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal((JSON.parse(ok.stdout) as Job).state, 'succeeded');
    assert.match(ok.stderr, new RegExp(`job ${JOB} \\(device.quarantine\\) succeeded`));

    const failed = job({
      kind: 'device.release',
      state: 'failed',
      error: { code: 'HEALTH_CHECK_FAILED', message: 'gpu on GPU_2 (Critical)', retryable: false },
    });
    jobReads = [failed];
    const r = await fleetctl('device', 'release', TRAY, '--reason', 'try', '--wait');
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`error: job ${JOB} failed: HEALTH_CHECK_FAILED: gpu on GPU_2`));
  });

  it('a missing or blank reason, a bad fault class or device ID is a usage error (exit 2), not sent', async () => {
    for (const [args, message] of [
      [['quarantine', TRAY], /required option '--reason <text>' not specified/],
      [['remediate', TRAY], /required option '--reason <text>' not specified/],
      [['release', TRAY, '--reason', '   '], /--reason is blank/],
      [['remediate', TRAY, '--reason', 'x', '--fault-class', 'fan'], /'fan' is invalid/],
      [['quarantine', 'tray-3', '--reason', 'x'], /tray-3 is not a device ID/],
      [['health', 'tray-3'], /tray-3 is not a device ID/],
    ] as const) {
      const r = await fleetctl('device', ...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    assert.deepEqual(requests, []);
  });

  it("the hub's refusal (a device held already) exits 3 with its code and message", async () => {
    answers[`POST /v1/devices/${TRAY}/quarantine`] = {
      status: 409,
      body: { error: { code: 'CONFLICT', message: 'device dev-01-r001-ct03 is already quarantined' } },
    };
    const r = await fleetctl('device', 'quarantine', TRAY, '--reason', 'again');
    assert.equal(r.code, 3);
    assert.match(r.stderr, /error: CONFLICT \(HTTP 409\): device dev-01-r001-ct03 is already quarantined/);
  });
});

describe('device health', () => {
  it('prints the reading and its faults; -o json is the hub object', async () => {
    const r = await fleetctl('device', 'health', TRAY);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Healthy:\s+no \(1 fault\)$/m);
    assert.match(r.stdout, /^Power:\s+On$/m);
    assert.match(r.stdout, /^Since:\s+2030-01-01T00:03:00.000Z \(3 readings in a row\)$/m);
    assert.match(r.stdout, /^ {2}CLASS\s+COMPONENT\s+SEVERITY\s+MESSAGE$/m);
    assert.match(r.stdout, /^ {2}gpu\s+GPU_2\s+Critical\s+Xid 79: fell off the bus$/m);
    const json = await fleetctl('device', 'health', TRAY, '-o', 'json');
    assert.deepEqual(JSON.parse(json.stdout), health);
    // A reading has no id of its own: -o id is the device's, for scripts that pipe it on.
    const id = await fleetctl('device', 'health', TRAY, '-o', 'id');
    assert.equal(id.code, 0, id.stderr);
    assert.equal(id.stdout, `${health.device_id}\n`);
  });

  it('a device never observed is the hub 404 (exit 3)', async () => {
    answers[`GET /v1/devices/${TRAY}/health`] = {
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: `health reading of device ${TRAY} not found` } },
    };
    const r = await fleetctl('device', 'health', TRAY);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /NOT_FOUND \(HTTP 404\): health reading of device/);
  });
});

describe('rma', () => {
  it('list sends the filters (repeatable) and prints a table, or {items} as JSON', async () => {
    const r = await fleetctl('rma', 'list', '--state', 'open,shipped', '--site', 'dev-01', '--device', TRAY);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      requests.map((q) => q.url),
      [`/v1/rma?state=open&state=shipped&site_id=dev-01&device_id=${TRAY}&limit=500`],
    );
    assert.match(r.stdout, /^ID\s+DEVICE\s+STATE\s+PART\s+VENDOR CASE\s+AGE$/m);
    assert.match(r.stdout, new RegExp(`^${CASE}\\s+${TRAY}\\s+closed\\s+GPU_2\\s+NV-123456\\s`, 'm'));
    const json = await fleetctl('rma', 'list', '-o', 'json');
    assert.deepEqual(JSON.parse(json.stdout), { items: [rmaCase] });
  });

  it('show prints the case, its history and the swap', async () => {
    const r = await fleetctl('rma', 'show', CASE);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^State:\s+closed$/m);
    assert.match(r.stdout, new RegExp(`^Opened:\\s+.* by remediation \\(remediation job ${JOB}\\)$`, 'm'));
    assert.match(r.stdout, /^Next moves:\s+none by an operator$/m);
    assert.match(r.stdout, /^ {2}2030-01-01T00:10:00.000Z\s+\(new\) -> open\s+remediation\s/m);
    assert.match(r.stdout, /^ {2}2030-01-02T00:00:00.000Z\s+open -> shipped\s+alice\s+-\s+picked up$/m);
    assert.match(r.stdout, /^Swap:\n {2}PART\s+OLD SERIAL\s+NEW SERIAL\n {2}GPU_2\s+G-OLD\s+G-NEW$/m);
  });

  it('create posts the device, part, reason and vendor case with an idempotency key', async () => {
    const r = await fleetctl('rma', 'create', TRAY, '--part', 'GPU_2', '--reason', 'Xid 79', '--vendor-case', 'NV-1');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(sent(), [
      {
        method: 'POST',
        url: '/v1/rma',
        body: { device_id: TRAY, failed_part: 'GPU_2', reason: 'Xid 79', vendor_case_id: 'NV-1' },
      },
    ]);
    assert.match(requests[0]!.idempotencyKey!, /^fleetctl-/);
    assert.match(r.stdout, new RegExp(`^${CASE}\\s+${TRAY}\\s+open\\s+GPU_2`, 'm'));
  });

  it('update with a state prints the case and the job it started; --wait follows the job', async () => {
    const shipped = { ...rmaCase, state: 'shipped', job: job({ kind: 'device.rma_ship' }) };
    answers[`PATCH /v1/rma/${CASE}`] = { status: 202, body: shipped };
    const r = await fleetctl(
      'rma',
      'update',
      CASE,
      '--state',
      'shipped',
      '--reason',
      'picked up',
      '--vendor-case',
      'V9',
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(sent(), [
      {
        method: 'PATCH',
        url: `/v1/rma/${CASE}`,
        body: { state: 'shipped', reason: 'picked up', vendor_case_id: 'V9' },
      },
    ]);
    assert.match(r.stdout, new RegExp(`^${CASE}\\s+${TRAY}\\s+shipped\\s`, 'm'));
    assert.match(r.stderr, new RegExp(`device.rma_ship started: follow it with: fleetctl job wait ${JOB}`));

    jobReads = [job({ kind: 'device.rma_ship', state: 'succeeded' })];
    const waited = await fleetctl('rma', 'update', CASE, '--state', 'shipped', '--reason', 'x', '--wait', '-o', 'json');
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal((JSON.parse(waited.stdout) as Job).kind, 'device.rma_ship');

    answers[`PATCH /v1/rma/${CASE}`] = { status: 200, body: { ...rmaCase, vendor_case_id: null, job: null } };
    requests.length = 0;
    const cleared = await fleetctl('rma', 'update', CASE, '--clear-vendor-case', '-o', 'json');
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.deepEqual(requests[0]!.body, { vendor_case_id: null });
    assert.equal((JSON.parse(cleared.stdout) as { job: unknown }).job, null);
  });

  it('usage errors (exit 2) reach no hub; a move the case cannot make is the hub 409 (exit 3)', async () => {
    for (const [args, message] of [
      [['update', CASE, '--state', 'shipped'], /--state needs --reason/],
      [['update', CASE], /nothing to change/],
      [['update', CASE, '--state', 'lost', '--reason', 'x'], /'lost' is invalid/],
      [['update', CASE, '--vendor-case', 'V', '--clear-vendor-case'], /not both/],
      [['create', TRAY, '--part', 'GPU_2'], /required option '--reason <text>'/],
      [['create', 'tray-3', '--part', 'GPU_2', '--reason', 'x'], /tray-3 is not a device ID/],
    ] as const) {
      const r = await fleetctl('rma', ...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    assert.deepEqual(requests, []);
    answers[`PATCH /v1/rma/${CASE}`] = {
      status: 409,
      body: { error: { code: 'CONFLICT', message: 'RMA case is closed: an operator may move it to nothing' } },
    };
    const r = await fleetctl('rma', 'update', CASE, '--state', 'shipped', '--reason', 'x');
    assert.equal(r.code, 3);
    assert.match(r.stderr, /CONFLICT \(HTTP 409\): RMA case is closed/);
  });
});

describe('sla breaches and facility events', () => {
  it('sla breaches sends its filters and prints the breaches; an ID shows one', async () => {
    const r = await fleetctl('sla', 'breaches', '--status', 'open', '--object-type', 'device', '--object', TRAY);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      requests.map((q) => q.url),
      [`/v1/sla-breaches?status=open&object_type=device&object_id=${TRAY}&limit=500`],
    );
    assert.match(r.stdout, /^ID\s+OBJECT\s+KEY\s+LIMIT\s+OVERDUE\s+STATUS\s+AGE$/m);
    assert.match(
      r.stdout,
      new RegExp(`^${BREACH}\\s+device/dev-01-r001-ct03\\s+lifecycle:quarantined\\s+259200s\\s+10s\\s+open\\s`, 'm'),
    );
    const wide = await fleetctl('sla', 'breaches', '-o', 'wide');
    assert.match(wide.stdout, /ops-pager:sla\.breached:delivered/);
    const one = await fleetctl('sla', 'breach', BREACH, '-o', 'json');
    assert.deepEqual(JSON.parse(one.stdout), breach);
  });

  it('facility events sends its filters and prints the events', async () => {
    const r = await fleetctl('facility', 'events', '--state', 'awaiting_approval', '--kind', 'leak', '--rack', RACK);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      requests.map((q) => q.url),
      [`/v1/facility-events?state=awaiting_approval&kind=leak&rack_id=${RACK}&limit=500`],
    );
    assert.match(r.stdout, /^ID\s+KIND\s+SEVERITY\s+STATE\s+RESPONSE\s+RACKS\s+SOURCE\s+AGE$/m);
    assert.match(
      r.stdout,
      new RegExp(`^${EVENT}\\s+leak\\s+warning\\s+awaiting_approval\\s+power_off\\s+1\\s+bms`, 'm'),
    );
    const bad = await fleetctl('facility', 'events', '--page-size', '0');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--page-size must be between 1 and 1000/);
  });
});

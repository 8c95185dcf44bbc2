import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Job } from '@fleet/client';
import { JOB, jobFixture, startFakeHub, type Answer, type FakeHub, type RecordedRequest } from './helpers/fake-hub.js';

// enrol, burn-in and job decide against a fake hub: the requests they send, the decision a job waits for as
// describe and --wait show it, and the usage errors that never reach the hub.

const RACK = '7a000000-0000-4000-8000-000000000001';
const TRAY_1 = '5f0c2f1e-0000-4000-8000-000000000001';
const TRAY_2 = '5f0c2f1e-0000-4000-8000-000000000002';

const job = (overrides: Partial<Job> = {}) =>
  jobFixture({ kind: 'rack.enrol', target: { device_id: null, rack_id: RACK, site_id: 'dev-01' }, ...overrides });

const waiting = (devices: Record<string, string>) =>
  job({
    state: 'running',
    progress: { stage: 'awaiting_decision', decision: { stage: 'burn_in', devices, since: '2030-01-01T00:10:00Z' } },
    timeline: {
      currentStage: 'burn_in',
      stages: [
        { name: 'inventory_read', status: 'completed' },
        { name: 'burn_in', status: 'failed', message: 'GPU stress failed on 2 trays' },
      ],
    },
  });
const bothWaiting = waiting({ [TRAY_1]: 'gpu stress: GPU 3 Xid 79', [TRAY_2]: 'memory test timed out' });

/** A hub that records every request; GET /v1/jobs/{id} answers from `jobReads`, the decision with `decisionAnswer`. */
const requests: RecordedRequest[] = [];
let jobReads: Job[] = [];
let decisionAnswer: Answer = { status: 202, body: bothWaiting };
let hub: FakeHub;
const fleetctl = (...args: string[]) => hub.fleetctl(...args);

before(async () => {
  hub = await startFakeHub(({ method, url }) => {
    if (method === 'GET' && url.startsWith('/v1/racks?'))
      return { status: 200, body: { items: [{ id: RACK, name: 'rack-01', site_id: 'dev-01' }] } };
    if (method === 'GET' && url === `/v1/jobs/${JOB}`) return { status: 200, body: jobReads.shift() ?? job() };
    if (method === 'POST' && url === `/v1/jobs/${JOB}/decision`) return decisionAnswer;
    if (method === 'POST' && /^\/v1\/(racks|devices)\/[^/]+\/(enrol|burn-in)$/.test(url)) {
      const kind = url.endsWith('burn-in')
        ? 'device.burn_in'
        : url.startsWith('/v1/racks')
          ? 'rack.enrol'
          : 'device.enrol';
      return { status: 202, body: job({ kind }) };
    }
    return undefined;
  }, requests);
});
after(() => hub.close());
beforeEach(() => {
  requests.length = 0;
  jobReads = [];
  decisionAnswer = { status: 202, body: bothWaiting };
});

describe('enrol and burn-in', () => {
  it('enrol rack finds the rack by name in its site and starts the job with an idempotency key', async () => {
    const r = await fleetctl('enrol', 'rack', 'rack-01', '--site', 'dev-01', '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as Job).kind, 'rack.enrol');
    assert.deepEqual(
      requests.map((q) => `${q.method} ${q.url}`),
      ['GET /v1/racks?site_id=dev-01', `POST /v1/racks/${RACK}/enrol`],
    );
    assert.match(requests[1]!.idempotencyKey!, /^fleetctl-/);
  });

  it('enrol device and burn-in device post to the device, with the key given', async () => {
    const enrol = await fleetctl('enrol', 'device', TRAY_1, '--idempotency-key', 'enrol-t1', '-o', 'id');
    assert.equal(enrol.code, 0, enrol.stderr);
    assert.equal(enrol.stdout, `${JOB}\n`);
    const burnIn = await fleetctl('burn-in', 'device', TRAY_2);
    assert.equal(burnIn.code, 0, burnIn.stderr);
    assert.match(burnIn.stdout, /device\.burn_in/);
    assert.match(burnIn.stderr, new RegExp(`follow it with: fleetctl job wait ${JOB}`));
    assert.deepEqual(
      requests.map((q) => [q.url, q.idempotencyKey?.startsWith('fleetctl-') ? 'fresh' : q.idempotencyKey]),
      [
        [`/v1/devices/${TRAY_1}/enrol`, 'enrol-t1'],
        [`/v1/devices/${TRAY_2}/burn-in`, 'fresh'],
      ],
    );
  });

  it('a wrong target or device ID is a usage error (exit 2) that reaches no hub', async () => {
    for (const [args, message] of [
      [['enrol', 'site', 'dev-01'], /enrol site: target must be rack or device/],
      [['enrol', 'device', 'tray-1'], /tray-1 is not a device ID/],
      [['enrol', 'device', TRAY_1, '--site', 'dev-01'], /--site is for racks/],
      [['burn-in', 'rack', RACK], /burn-in rack: only devices/],
      [['burn-in', 'device'], /missing required argument 'device'/],
    ] as const) {
      const r = await fleetctl(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    assert.deepEqual(requests, []);
  });

  it('--wait prints the devices a failed stage waits on and the decide command, and goes on waiting', async () => {
    // Two trays wait; a decision for one leaves the other waiting (printed again); then the job succeeds.
    jobReads = [bothWaiting, bothWaiting, waiting({ [TRAY_2]: 'memory test timed out' }), job({ state: 'succeeded' })];
    const r = await fleetctl('enrol', 'rack', RACK, '--wait', '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as Job).state, 'succeeded');
    const hint = `decide with: fleetctl job decide ${JOB} retry|skip|reject --reason <text> [--device <id> ...]`;
    assert.equal(r.stderr.split(hint).length - 1, 2, r.stderr);
    assert.match(r.stderr, /stage burn_in waits for a decision since 2030-01-01T00:10:00Z \(2 device\(s\)\):/);
    assert.match(r.stderr, new RegExp(` {4}${TRAY_1}: gpu stress: GPU 3 Xid 79$`, 'm'));
    assert.match(r.stderr, /stage burn_in waits for a decision since .* \(1 device\(s\)\):/);
    assert.equal(r.stderr.split(`${TRAY_2}: memory test timed out`).length - 1, 2);
  });
});

describe('job decide', () => {
  it('sends the action, the reason and the devices, and prints the job', async () => {
    const r = await fleetctl('job', 'decide', JOB, 'reject', '--reason', ' GPU 3 is dead ', '--device', TRAY_1);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(requests, [
      {
        method: 'POST',
        url: `/v1/jobs/${JOB}/decision`,
        body: { action: 'reject', reason: 'GPU 3 is dead', device_ids: [TRAY_1] },
        idempotencyKey: undefined,
      },
    ]);
    assert.match(r.stderr, new RegExp(`reject sent for 1 device\\(s\\) of job ${JOB}`));
    assert.match(r.stdout, /burn_in awaits decision/);
  });

  it('--device repeats; without it the decision is for every waiting device', async () => {
    await fleetctl('job', 'decide', JOB, 'skip', '--reason', 'known', '--device', TRAY_1, '--device', TRAY_2);
    await fleetctl('job', 'decide', JOB, 'retry', '--reason', 'reseated');
    assert.deepEqual(
      requests.map((q) => q.body),
      [
        { action: 'skip', reason: 'known', device_ids: [TRAY_1, TRAY_2] },
        { action: 'retry', reason: 'reseated' },
      ],
    );
  });

  it('a missing or blank reason, an unknown action or a bad device ID is a usage error (exit 2)', async () => {
    for (const [args, message] of [
      [[JOB, 'retry'], /required option '--reason <text>' not specified/],
      [[JOB, 'retry', '--reason', '  '], /--reason is blank/],
      [
        [JOB, 'maybe', '--reason', 'why not'],
        /'maybe' is invalid for argument 'action'\. Allowed choices are retry, skip, reject/,
      ],
      [[JOB, 'retry', '--reason', 'x', '--device', 'tray-1'], /tray-1 is not a device ID/],
    ] as const) {
      const r = await fleetctl('job', 'decide', ...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    assert.deepEqual(requests, []);
  });

  it("the hub's refusal (a job that waits for no decision) exits 3 with its message", async () => {
    decisionAnswer = { status: 409, body: { error: { code: 'CONFLICT', message: `job ${JOB} is not waiting` } } };
    const r = await fleetctl('job', 'decide', JOB, 'retry', '--reason', 'again');
    assert.equal(r.code, 3);
    assert.match(r.stderr, /CONFLICT \(HTTP 409\): .* is not waiting/);
  });

  it('--wait follows the job from the decision on: the decision it answered is not offered again', async () => {
    jobReads = [bothWaiting, job({ state: 'running', progress: { stage: 'burn_in' } }), job({ state: 'succeeded' })];
    const r = await fleetctl('job', 'decide', JOB, 'retry', '--reason', 'reseated', '--wait');
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /decide with:/);
    assert.match(r.stderr, new RegExp(`job ${JOB} \\(rack.enrol\\) succeeded`));
  });
});

describe('describe job', () => {
  it('shows the waiting stage, each waiting device with why, and the decide command', async () => {
    jobReads = [bothWaiting];
    const r = await fleetctl('describe', 'job', JOB);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}stage 2 burn_in: failed GPU stress failed on 2 trays$/m);
    assert.match(r.stdout, /^ {2}stage burn_in waits for a decision since 2030-01-01T00:10:00Z \(2 device\(s\)\):$/m);
    assert.match(r.stdout, new RegExp(`^ {4}${TRAY_1}: gpu stress: GPU 3 Xid 79$`, 'm'));
    assert.match(r.stdout, new RegExp(`^ {4}${TRAY_2}: memory test timed out$`, 'm'));
    assert.match(r.stdout, new RegExp(`^ {2}decide with: fleetctl job decide ${JOB} retry\\|skip\\|reject`, 'm'));
  });

  it('a job that ended shows no decision, even one its progress kept', async () => {
    jobReads = [{ ...bothWaiting, state: 'failed' }];
    const r = await fleetctl('describe', 'job', JOB);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /waits for a decision|decide with/);
  });
});

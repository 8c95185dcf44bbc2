import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { slaPolicyWith, type FleetLifecycleState } from '@fleet/domain';
import {
  connectDb,
  deliveriesOfBreaches,
  failUnconfiguredDeliveries,
  insertDevice,
  insertJobWithStartIntent,
  insertSite,
  leaseDueDeliveries,
  listSlaBreaches,
  markDeliveryDelivered,
  markDeliveryFailedAttempt,
  openSlaBreachCounts,
  pendingDeliveries,
  setLifecycle,
  watchSlas,
  type DbHandle,
  type WebhookSubscription,
} from '../src/index.js';
import { cloneTestDatabase, type TestDatabase } from '../src/testing.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

const policy = slaPolicyWith({});
const webhooks: WebhookSubscription[] = [
  { name: 'ops', events: ['sla.breached', 'sla.resolved'] },
  { name: 'pager', events: ['sla.breached'] },
];

describe('stuck-state SLA breaches and the webhook outbox (Postgres)', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let n = 0;

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 5);
    await insertSite(handle.db, { id: 'sla-01', name: 'SLA' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const sqlq = (text: string, values: unknown[] = []) => handle.pool.query(text, values);
  const newDevice = async () => (await insertDevice(handle.db, { name: `tray-${++n}`, siteId: 'sla-01' })).id;
  /** Moves a device and dates the move `ago` back, as if it had happened then. */
  const move = async (deviceId: string, to: FleetLifecycleState, ago: string) => {
    const change = await setLifecycle(handle.db, {
      deviceId,
      to,
      writer: 'lifecycle-workflow',
      jobId: randomUUID(),
      reason: 'Test',
    });
    await sqlq(`update device_transitions set at = now() - $2::interval where id = $1`, [change!.transition!.id, ago]);
  };
  const watch = (p = policy) => watchSlas(handle.db, p, webhooks);
  const newJob = async (kind: string, fields: string, values: unknown[] = []) => {
    const job = await insertJobWithStartIntent(handle.db, {
      kind,
      siteId: 'sla-01',
      deviceId: await newDevice(),
      params: {},
      createdBy: 'sla-test',
    });
    await sqlq(`update jobs set ${fields} where id = $1`, [job.id, ...values]);
    return job.id;
  };

  it('a device past its state limit is one breach however often found; leaving the state resolves it', async () => {
    const stuck = await newDevice();
    const fresh = await newDevice();
    await move(stuck, 'enrolling', '3 hours');
    await move(fresh, 'enrolling', '10 minutes');

    const first = await watch();
    assert.deepEqual(
      first.opened.map((b) => [b.objectId, b.objectType, b.slaKey, b.state, b.limitS, b.objectName, b.siteId]),
      [[stuck, 'device', 'lifecycle:enrolling', 'enrolling', 7200, `tray-${n - 1}`, 'sla-01']],
    );
    const breach = first.opened[0]!;
    const overdueS = (breach.breachedAt.getTime() - breach.since.getTime()) / 1000 - 7200;
    assert.ok(overdueS > 3590 && overdueS < 3610, `about an hour overdue, not ${overdueS}`);
    assert.equal(first.enqueued, 2, 'one delivery per webhook that takes sla.breached');

    const again = await watch();
    assert.deepEqual([again.opened.length, again.resolved.length, again.enqueued], [0, 0, 0]);
    assert.deepEqual(await openSlaBreachCounts(handle.db), [
      { objectType: 'device', slaKey: 'lifecycle:enrolling', count: 1 },
    ]);

    await move(stuck, 'failed', '1 second');
    const moved = await watch();
    assert.deepEqual(
      moved.resolved.map((b) => [b.id, b.resolution]),
      [[breach.id, 'cleared']],
    );
    assert.equal(moved.opened.length, 0, 'failed has 72 h');
    assert.equal(moved.enqueued, 1, 'only ops takes sla.resolved');

    const deliveries = await deliveriesOfBreaches(handle.db, [breach.id]);
    assert.deepEqual(deliveries.map((d) => `${d.webhook}/${d.event}/${d.status}`).sort(), [
      'ops/sla.breached/pending',
      'ops/sla.resolved/pending',
      'pager/sla.breached/pending',
    ]);
    for (const d of deliveries) {
      const payload = d.payload as { delivery_id: string; event: string; breach: Record<string, unknown> };
      assert.equal(payload.delivery_id, d.id, 'the body names its delivery, so the signature covers it');
      assert.equal(payload.event, d.event);
      assert.equal(payload.breach['object_id'], stuck);
      assert.equal(payload.breach['sla_key'], 'lifecycle:enrolling');
      assert.equal(payload.breach['resolution'], d.event === 'sla.resolved' ? 'cleared' : null);
    }
    const [resolved] = await listSlaBreaches(handle.db, { limit: 10, open: false, objectId: [stuck] });
    assert.equal(resolved?.id, breach.id);
  });

  it('a state entered again is a new breach; a limit the policy drops resolves as unwatched', async () => {
    const id = await newDevice();
    await move(id, 'enrolling', '3 hours');
    const [first] = (await watch()).opened;
    await move(id, 'failed', '80 hours');
    await move(id, 'enrolling', '150 minutes');
    const next = await watch();
    assert.deepEqual(
      next.resolved.map((b) => b.id),
      [first!.id],
    );
    assert.equal(next.opened.length, 1);
    assert.equal(next.opened[0]!.slaKey, 'lifecycle:enrolling');
    assert.ok(next.opened[0]!.since > first!.since, 'its clock runs from the new move');

    const unwatched = await watch(slaPolicyWith({ lifecycle: { enrolling: null } }));
    assert.deepEqual(
      unwatched.resolved.map((b) => [b.objectId, b.resolution]),
      [[id, 'unwatched']],
    );
    await move(id, 'failed', '1 second');
  });

  it('jobs running or queued too long and a campaign phase breach; children and fresh jobs do not', async () => {
    const running = await newJob('device.power', `state = 'running', started_at = now() - interval '1 hour'`);
    const queued = await newJob('device.power', `created_at = now() - interval '1 hour'`);
    await newJob('device.power', `state = 'running', started_at = now() - interval '1 minute'`);
    const child = await newJob(
      'device.power',
      `state = 'running', started_at = now() - interval '2 hours', parent_id = $2`,
      [running],
    );
    const campaign = await newJob(
      'firmware.campaign',
      `state = 'running', device_id = null, started_at = now() - interval '30 days', progress = $2`,
      [{ stage: 'awaiting_approval' }],
    );

    const found = await watch();
    const keyed = (list: typeof found.opened) => list.map((b) => `${b.objectType}/${b.slaKey}/${b.objectId}`).sort();
    assert.deepEqual(
      keyed(found.opened),
      [`job/job_queued/${queued}`, `job/job_running:device.power/${running}`].sort(),
      'the stage has just been seen: its clock starts now',
    );

    await sqlq(`update sla_job_stages set since = now() - interval '4 days' where job_id = $1`, [campaign]);
    const phase = await watch();
    assert.deepEqual(keyed(phase.opened), [`campaign/job_stage:firmware.campaign:awaiting_approval/${campaign}`]);
    assert.equal(phase.opened[0]!.state, 'awaiting_approval');

    // The next phase starts a new clock: the breach resolves and the wave has its own 12 h.
    await sqlq(`update jobs set progress = $2 where id = $1`, [campaign, { stage: 'wave 1/3' }]);
    const wave = await watch();
    assert.deepEqual(keyed(wave.resolved), [`campaign/job_stage:firmware.campaign:awaiting_approval/${campaign}`]);
    assert.equal(wave.opened.length, 0);
    await sqlq(`update sla_job_stages set since = now() - interval '13 hours' where job_id = $1`, [campaign]);
    const late = await watch();
    assert.deepEqual(keyed(late.opened), [`campaign/job_stage:firmware.campaign:wave/${campaign}`]);
    assert.equal(late.opened[0]!.state, 'wave 1/3');

    await sqlq(`update jobs set state = 'succeeded' where id = any($1)`, [[running, queued, campaign]]);
    const ended = await watch();
    assert.equal(ended.resolved.length, 3);
    // Its parent ended while it runs on (a terminated campaign's device still stopping): nothing else watches it now.
    assert.deepEqual(keyed(ended.opened), [`job/job_running:device.power/${child}`]);
    const { rows } = await sqlq(`select count(*)::int as n from sla_job_stages where job_id = $1`, [campaign]);
    assert.equal(rows[0].n, 0, "an ended job's stage is forgotten");
  });

  it('two agents watching at once open each breach once', async () => {
    const id = await newDevice();
    await move(id, 'enrolling', '14 hours');
    await move(id, 'enrolled', '14 hours');
    await move(id, 'burning_in', '13 hours');
    const passes = await Promise.all([watch(), watch(), watch()]);
    assert.ok(passes.some((p) => p.ran));
    assert.equal(passes.flatMap((p) => p.opened).filter((b) => b.objectId === id).length, 1);
  });

  it('the outbox leases a due delivery to one sender, retries a failed attempt, keeps a delivered one', async () => {
    const id = await newDevice();
    await move(id, 'quarantined', '26 hours');
    await move(id, 'remediating', '25 hours');
    const [breach] = (await watch()).opened;
    const mine = async (leased: Promise<{ breachId: string; id: string; attempts: number }[]>) =>
      (await leased).filter((d) => d.breachId === breach!.id);

    const [first] = await mine(leaseDueDeliveries(handle.db, ['ops'], 1000, 60));
    assert.equal(first?.attempts, 1);
    assert.deepEqual(await mine(leaseDueDeliveries(handle.db, ['ops'], 1000, 60)), [], 'leased: not due again');

    await markDeliveryFailedAttempt(handle.db, first.id, { status: 500, error: 'HTTP 500' }, 0);
    const [second] = await mine(leaseDueDeliveries(handle.db, ['ops'], 1000, 60));
    assert.equal(second?.id, first.id);
    assert.equal(second?.attempts, 2);
    await markDeliveryDelivered(handle.db, first.id, 204);
    await markDeliveryFailedAttempt(handle.db, first.id, { error: 'late' }, 0);
    const [delivered] = (await deliveriesOfBreaches(handle.db, [breach!.id])).filter((d) => d.webhook === 'ops');
    assert.deepEqual(
      [delivered?.status, delivered?.lastStatus, delivered?.lastError, delivered?.attempts],
      ['delivered', 204, null, 2],
      'a delivered one stays delivered',
    );

    const pending = await pendingDeliveries(handle.db);
    assert.ok((pending.byWebhook.get('pager') ?? 0) >= 1);
    assert.ok(pending.nextDueAt);
    assert.ok((await failUnconfiguredDeliveries(handle.db, ['ops'])) >= 1);
    const [pager] = (await deliveriesOfBreaches(handle.db, [breach!.id])).filter((d) => d.webhook === 'pager');
    assert.deepEqual([pager?.status, pager?.lastError], ['failed', 'the webhook is no longer configured']);
  });
});

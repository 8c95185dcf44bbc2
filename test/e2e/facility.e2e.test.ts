import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApiToken } from '@fleet/db';
import { waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface EventBody {
  id: string;
  state: string;
  racks: {
    quarantine: { device_id: string; job_id: string | null; skipped: string | null }[] | null;
    power_off: { job_id: string | null; outcome: string | null } | null;
  }[];
}
interface Job {
  state: string;
  error: { message: string } | null;
  timeline: { stages: { name: string; status: string }[] } | null;
}
interface AuditRow {
  action: string;
  details: Record<string, unknown> | null;
}

const offInOrder = [
  ['power_off_compute', 'completed'],
  ['power_off_switches', 'completed'],
  ['power_off_shelves', 'completed'],
];

// Facility events on the whole stack (docs/day2.md): a building management system reports a leak on a simulated GB200
// NVL72 rack; the hub holds its 35 devices through the remediation workflow, and once an operator approves, the rack
// powers off in order (compute, switches, shelves) despite the holds. The critical variant powers off at once.
describe('facility events on a simulated rack', () => {
  const stack = new Stack({
    racks: 1,
    timeScale: 0.005,
    power: { heartbeatTimeoutS: 5, maximumAttempts: 2, settleTimeoutS: 60 },
    pollIntervalMs: 50,
  });
  let rackId = '';
  let bms = '';
  before(
    async () => {
      await stack.start();
      rackId = stack.rackIds.get('r001')!;
      bms = (await createApiToken(stack.dbHandle.db, 'bms-hall-1', 'facility')).token;
    },
    { timeout: 180_000 },
  );
  after(() => stack.stop(), { timeout: 60_000 });

  const get = async <T>(path: string) =>
    expectStatus(200)(await stack.api('GET', path, undefined, stack.tokens.viewer)).body as T;
  const eventOf = (id: string) => get<EventBody>(`/v1/facility-events/${id}`);
  const auditOf = async (id: string) =>
    (await get<{ items: AuditRow[] }>(`/v1/audit?target=facility-event/${id}&limit=100`)).items.reverse();
  const quarantinedCount = async () =>
    (await get<{ items: unknown[] }>(`/v1/devices?rack_id=${rackId}&lifecycle=quarantined&limit=100`)).items.length;

  it(
    'a leak holds the rack, and once approved powers it off compute first, then switches, then shelves',
    { timeout: 240_000 },
    async () => {
      const posted = expectStatus(201)(
        await stack.api(
          'POST',
          '/v1/facility-events',
          { external_id: 'bms-4711', kind: 'leak', severity: 'warning', rack_ids: [rackId], message: 'drip tray wet' },
          bms,
        ),
      ).body as EventBody;
      assert.equal(posted.state, 'awaiting_approval');
      const holds = posted.racks[0]!.quarantine!;
      assert.equal(holds.filter((d) => d.job_id).length, 35, 'every device of the NVL72 rack');
      for (const d of holds) assert.equal((await stack.waitForJob(d.job_id!, 60_000)).state, 'succeeded');
      assert.equal(await quarantinedCount(), 35);

      const approved = expectStatus(200)(
        await stack.api(
          'POST',
          `/v1/facility-events/${posted.id}/approve`,
          { reason: 'leak confirmed' },
          stack.tokens.operator,
        ),
      ).body as EventBody;
      assert.equal(approved.state, 'powering_off');
      const job = (await stack.waitForJob(approved.racks[0]!.power_off!.job_id!, 120_000)) as unknown as Job;
      assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
      assert.deepEqual(
        job.timeline!.stages.map((s) => [s.name, s.status]),
        offInOrder,
      );
      await waitFor('the event is done', async () => (await eventOf(posted.id)).state === 'done', 30_000);
      assert.equal(await quarantinedCount(), 35, 'the devices stay held');
      assert.deepEqual(
        (await auditOf(posted.id)).map((r) => r.action),
        [
          'facility.event.received',
          'facility.event.graded',
          'facility.quarantine',
          'facility.event.approve',
          'facility.power_off',
          'facility.power_off.ended',
        ],
      );
    },
  );

  it('a critical event powers the rack off without waiting and says so', { timeout: 240_000 }, async () => {
    // The leak fixed, an operator powers the held rack back on (a dark rack's tray BMCs have no AC to answer with).
    const on = expectStatus(202)(
      await stack.api(
        'POST',
        `/v1/racks/${rackId}/power`,
        { op: 'on', override_quarantine: { reason: 'leak fixed, drip tray dry' } },
        stack.tokens.operator,
      ),
    ).body as { id: string };
    assert.equal((await stack.waitForJob(on.id, 120_000)).state, 'succeeded');
    const posted = expectStatus(201)(
      await stack.api(
        'POST',
        '/v1/facility-events',
        {
          external_id: 'bms-4712',
          kind: 'leak',
          severity: 'critical',
          critical: true,
          rack_ids: [rackId],
          message: 'manifold burst',
        },
        bms,
      ),
    ).body as EventBody;
    assert.equal(posted.state, 'powering_off');
    const job = (await stack.waitForJob(posted.racks[0]!.power_off!.job_id!, 120_000)) as unknown as Job;
    assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
    assert.deepEqual(
      job.timeline!.stages.map((s) => [s.name, s.status]),
      offInOrder,
    );
    await waitFor('the event is done', async () => (await eventOf(posted.id)).state === 'done', 30_000);
    const done = await eventOf(posted.id);
    assert.ok(
      done.racks[0]!.quarantine!.every((d) => /quarantined already/.test(d.skipped ?? '')),
      'held by the first event',
    );
    const audit = await auditOf(posted.id);
    assert.equal(
      audit.find((r) => r.action === 'facility.power_off')!.details!['approval'],
      'critical: powered off without approval',
    );
    assert.ok(!audit.some((r) => r.action === 'facility.event.approve'));
  });
});

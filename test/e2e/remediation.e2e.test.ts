import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setLifecycle } from '@fleet/db';
import type { FleetLifecycleState } from '@fleet/domain';
import { waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface JobBody {
  id: string;
  kind: string;
  state: string;
  params: Record<string, unknown>;
  progress?: { stage?: string; message?: string; decision?: { stage: string; actions?: string[] } } | null;
  result?: { fixedBy?: string; state?: string; steps?: { step: string; fixed: boolean }[] } | null;
  error?: { code: string; message: string } | null;
}
interface DeviceBody {
  lifecycle: { state: string };
}

const mainLine: FleetLifecycleState[] = ['enrolling', 'enrolled', 'burning_in', 'certified', 'in_service'];

/**
 * Quarantine and remediation on the whole stack (docs/day2.md): the observer's readings, the hub's rules and blast
 * radius, the remediation workflow's playbook steps on the simulated BMCs, and the lifecycle moves the agent applies.
 * Devices are put in service first the way the lifecycle writer would (the provisioning workflow does not exist yet).
 */
describe('quarantine and remediation of a simulated site', () => {
  const intervalS = 6;
  const stack = new Stack({
    bmcs: 6,
    timeScale: 0.01,
    observe: { intervalS, confirmations: 3 },
    // Device 5 is enrolled for real (its hardware read gives an RMA case its old serials) and again after its return.
    burnIn: { startDeadlineS: 600 },
    enrolment: { burnInHeartbeatTimeoutS: 10 },
    remediation: {
      hub: { blastRadius: { maxDevices: 2, maxRacks: 10, windowS: 3600 } },
      agent: { verifyTimeoutS: 30, verifyPollS: 1 },
    },
  });
  const id = (i: number) => stack.deviceIds.get(stack.bmcs[i]!.id)!;
  const get = async <T>(path: string) =>
    expectStatus(200)(await stack.api('GET', path, undefined, stack.tokens.viewer)).body as T;
  const lifecycleOf = async (i: number) => (await get<DeviceBody>(`/v1/devices/${id(i)}`)).lifecycle.state;
  const jobsOf = async (i: number) =>
    (await get<{ items: JobBody[] }>(`/v1/jobs?device_id=${id(i)}&limit=50`)).items.filter((j) =>
      j.kind.startsWith('device.'),
    );
  const unresponsive = (i: number) =>
    fetch(`${stack.simAdminUrl}/bmcs/${stack.bmcs[i]!.id}/health/unresponsive`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      // A hung BMC that a Manager.Reset (answered, then a reboot) brings back.
      body: JSON.stringify({ mode: 'timeout', clearOnReboot: true, answersManagerReset: true }),
    });

  /** Enrols a device through the API and waits for it to be certified. */
  const enrol = async (i: number) => {
    const res = await stack.api('POST', `/v1/devices/${id(i)}/enrol`, {}, stack.tokens.operator);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const jobId = (res.body as { id: string }).id;
    await waitFor(
      `device ${i} enrolled and burned in`,
      async () => {
        const j = await get<JobBody>(`/v1/jobs/${jobId}`);
        assert.ok(!['failed', 'cancelled'].includes(j.state), JSON.stringify(j));
        return j.state === 'succeeded';
      },
      240_000,
    );
    assert.equal(await lifecycleOf(i), 'certified');
  };
  /** The step no workflow takes yet (there is no provisioning workflow): certified → in_service. */
  const putInService = (i: number, fixture = randomUUID()) =>
    setLifecycle(stack.dbHandle.db, {
      deviceId: id(i),
      to: 'in_service',
      writer: 'lifecycle-workflow',
      jobId: fixture,
      reason: 'TestFixture',
    });

  before(
    async () => {
      await stack.start();
      const fixture = randomUUID();
      for (let i = 0; i < 5; i++) {
        for (const to of mainLine.slice(0, -1))
          await setLifecycle(stack.dbHandle.db, {
            deviceId: id(i),
            to,
            writer: 'lifecycle-workflow',
            jobId: fixture,
            reason: 'TestFixture',
          });
        await putInService(i, fixture);
      }
      await enrol(5);
      await putInService(5);
    },
    { timeout: 360_000 },
  );
  after(() => stack.stop());

  it(
    'a tray that stops answering is quarantined by rule, fixed by a BMC reset and back in service',
    { timeout: 180_000 },
    async () => {
      assert.ok((await unresponsive(0)).ok);
      await waitFor(
        'the rule quarantines it',
        async () => (await jobsOf(0)).some((j) => j.kind === 'device.remediate'),
        90_000,
      );
      const job = (await jobsOf(0)).find((j) => j.kind === 'device.remediate')!;
      assert.equal(job.params['rule'], 'bmc-unreachable');
      // One read per check: two could see queued, then running, and end the wait early.
      await waitFor(
        'the remediation ends',
        async () => !['queued', 'running'].includes((await get<JobBody>(`/v1/jobs/${job.id}`)).state),
        120_000,
      );
      const done = await get<JobBody>(`/v1/jobs/${job.id}`);
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      assert.equal(done.result?.fixedBy, 'bmc_reset');
      assert.equal(await lifecycleOf(0), 'in_service');
      const history = await get<{ items: { axis: string; to: string; reason: string }[] }>(
        `/v1/devices/${id(0)}/history?axis=lifecycle&limit=10`,
      );
      assert.deepEqual(
        history.items.slice(0, 3).map((h) => `${h.to}/${h.reason}`),
        ['in_service/Remediated', 'remediating/RemediationStarted', 'quarantined/QuarantinedByRule'],
      );
    },
  );

  it(
    'a fault storm beyond the blast radius quarantines every device but remediates only up to the limit',
    { timeout: 240_000 },
    async () => {
      // Device 0 was remediated automatically already: one of the two the window allows.
      for (const i of [1, 2, 3]) assert.ok((await unresponsive(i)).ok);
      await waitFor(
        'three remediation jobs',
        async () =>
          (await Promise.all([1, 2, 3].map(jobsOf))).every((js) => js.some((j) => j.kind === 'device.remediate')),
        120_000,
      );
      const jobs = await Promise.all(
        [1, 2, 3].map(async (i) => (await jobsOf(i)).find((j) => j.kind === 'device.remediate')!),
      );
      const gated = jobs.filter((j) => j.params['await_approval']);
      assert.equal(gated.length, 2, 'one more is within the limit of 2, the other two wait');
      for (const j of gated) assert.match(String(j.params['await_approval']), /blast radius/);
      await waitFor(
        'the gated ones wait for a decision',
        async () =>
          (await Promise.all(gated.map((j) => get<JobBody>(`/v1/jobs/${j.id}`)))).every(
            (j) => j.progress?.decision?.stage === 'blast_radius',
          ),
        60_000,
      );
      const waiting = await get<JobBody>(`/v1/jobs/${gated[0]!.id}`);
      assert.deepEqual(waiting.progress?.decision?.actions, ['approve', 'reject']);
      for (const j of gated) {
        const device = jobs.indexOf(j) + 1;
        assert.equal(await lifecycleOf(device), 'quarantined', 'held while it waits');
      }
      // An enrolment-style action is refused for this wait; an approval goes ahead.
      const retry = await stack.api(
        'POST',
        `/v1/jobs/${gated[0]!.id}/decision`,
        { action: 'retry', reason: 'x' },
        stack.tokens.operator,
      );
      assert.equal(retry.status, 409);
      const approve = await stack.api(
        'POST',
        `/v1/jobs/${gated[0]!.id}/decision`,
        { action: 'approve', reason: 'checked the site: one at a time is fine' },
        stack.tokens.operator,
      );
      assert.equal(approve.status, 202, JSON.stringify(approve.body));
      await waitFor(
        'the approved one is fixed',
        async () => (await get<JobBody>(`/v1/jobs/${gated[0]!.id}`)).state === 'succeeded',
        120_000,
      );
      // The other stays held until someone decides.
      assert.equal((await get<JobBody>(`/v1/jobs/${gated[1]!.id}`)).state, 'running');
      const reject = await stack.api(
        'POST',
        `/v1/jobs/${gated[1]!.id}/decision`,
        { action: 'reject', reason: 'sending it to the vendor instead' },
        stack.tokens.operator,
      );
      assert.equal(reject.status, 202);
      await waitFor(
        'the rejected one ends held',
        async () => (await get<JobBody>(`/v1/jobs/${gated[1]!.id}`)).state === 'succeeded',
        60_000,
      );
      assert.equal(await lifecycleOf(jobs.indexOf(gated[1]!) + 1), 'quarantined');
    },
  );

  it(
    'an operator quarantines a device with a reason, and releases it after a health check',
    { timeout: 120_000 },
    async () => {
      const bad = await stack.api('POST', `/v1/devices/${id(4)}/quarantine`, { reason: '' }, stack.tokens.operator);
      assert.equal(bad.status, 400);
      const q = await stack.api(
        'POST',
        `/v1/devices/${id(4)}/quarantine`,
        { reason: 'suspect DIMM, hold it' },
        stack.tokens.operator,
      );
      assert.equal(q.status, 202, JSON.stringify(q.body));
      await waitFor('held', async () => (await lifecycleOf(4)) === 'quarantined', 60_000);
      const again = await stack.api(
        'POST',
        `/v1/devices/${id(4)}/quarantine`,
        { reason: 'again' },
        stack.tokens.operator,
      );
      assert.equal(again.status, 409);
      const audit = await get<{ items: { action: string; details: Record<string, unknown> }[] }>(`/v1/audit?limit=50`);
      assert.ok(audit.items.some((a) => a.action === 'device.quarantine'));
      const r = await stack.api(
        'POST',
        `/v1/devices/${id(4)}/release`,
        { reason: 'DIMM reseated' },
        stack.tokens.operator,
      );
      assert.equal(r.status, 202, JSON.stringify(r.body));
      await waitFor('released', async () => (await lifecycleOf(4)) === 'in_service', 90_000);
      const history = await get<{ items: { to: string; reason: string; message: string | null }[] }>(
        `/v1/devices/${id(4)}/history?axis=lifecycle&limit=5`,
      );
      assert.deepEqual(
        history.items.slice(0, 3).map((h) => `${h.to}/${h.reason}`),
        ['in_service/Released', 'remediating/ReleaseRequested', 'quarantined/Quarantined'],
      );
      assert.equal(history.items[2]!.message, 'suspect DIMM, hold it');
    },
  );

  it(
    'a GPU fault no step fixes exhausts the playbook, opens an RMA case, and the swapped tray re-enrols and is back ' +
      'in service with the swap in its case',
    { timeout: 540_000 },
    async () => {
      const gpu = await fetch(`${stack.simAdminUrl}/bmcs/${stack.bmcs[5]!.id}/health/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ part: 'gpu', gpu: 1, offBus: true }),
      });
      assert.ok(gpu.ok);
      await waitFor(
        'the gpu-fault rule acts',
        async () => (await jobsOf(5)).some((j) => j.kind === 'device.remediate'),
        90_000,
      );
      const job = (await jobsOf(5)).find((j) => j.kind === 'device.remediate')!;
      assert.equal(job.params['rule'], 'gpu-fault');
      // Past the blast radius by now: an operator lets it go ahead.
      if (job.params['await_approval']) {
        await waitFor(
          'waiting',
          async () => Boolean((await get<JobBody>(`/v1/jobs/${job.id}`)).progress?.decision),
          60_000,
        );
        const ok = await stack.api(
          'POST',
          `/v1/jobs/${job.id}/decision`,
          { action: 'approve', reason: 'go' },
          stack.tokens.operator,
        );
        assert.equal(ok.status, 202);
      }
      await waitFor(
        'the playbook runs out',
        async () => (await get<JobBody>(`/v1/jobs/${job.id}`)).state === 'failed',
        180_000,
      );
      const done = await get<JobBody>(`/v1/jobs/${job.id}`);
      assert.equal(done.error?.code, 'REMEDIATION_EXHAUSTED');
      assert.deepEqual(
        done.result?.steps?.map((st) => `${st.step}:${st.fixed}`),
        // Not in a rack (no shelf feeds it), no manifest, the fault never cleared: the last three skip.
        ['hmc_reset:false', 'power_cycle:false', 'ac_cycle:false', 'firmware_reflash:false', 'burn_in:false'],
      );
      assert.equal(await lifecycleOf(5), 'quarantined');
      interface Rma {
        id: string;
        state: string;
        failed_part: string;
        fault_class: string | null;
        job_id: string | null;
        old_serials: Record<string, string>;
        swap: { part: string; old: string | null; new: string | null }[] | null;
      }
      await waitFor(
        'an RMA case',
        async () => (await get<{ items: Rma[] }>(`/v1/rma?device_id=${id(5)}`)).items.length > 0,
        30_000,
      );
      const rma = (await get<{ items: Rma[] }>(`/v1/rma?device_id=${id(5)}`)).items[0]!;
      assert.deepEqual(
        { state: rma.state, fault_class: rma.fault_class, job_id: rma.job_id },
        { state: 'open', fault_class: 'gpu', job_id: job.id },
      );
      assert.ok(Object.keys(rma.old_serials).length > 0, 'the enrolment read the hardware before the fault');
      const shipped = await stack.api(
        'PATCH',
        `/v1/rma/${rma.id}`,
        { state: 'shipped', vendor_case_id: 'NV-4711', reason: 'GPU off the bus' },
        stack.tokens.operator,
      );
      assert.equal(shipped.status, 202, JSON.stringify(shipped.body));
      await waitFor('at the vendor', async () => (await lifecycleOf(5)) === 'rma', 60_000);
      // The vendor swaps the GPU: a new serial, the fault gone.
      const swap = await fetch(`${stack.simAdminUrl}/bmcs/${stack.bmcs[5]!.id}/health/swap`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ part: 'gpu', gpu: 1 }),
      });
      assert.ok(swap.ok);
      const back = await stack.api(
        'PATCH',
        `/v1/rma/${rma.id}`,
        { state: 'replaced', reason: 'GPU replaced by the vendor' },
        stack.tokens.operator,
      );
      assert.equal(back.status, 202, JSON.stringify(back.body));
      await waitFor('back as discovered', async () => (await lifecycleOf(5)) === 'discovered', 60_000);
      const history = await get<{ items: { to: string; reason: string }[] }>(
        `/v1/devices/${id(5)}/history?axis=lifecycle&limit=10`,
      );
      assert.deepEqual(
        history.items.slice(0, 4).map((h) => `${h.to}/${h.reason}`),
        [
          'discovered/BackFromVendor',
          'rma/ShippedToVendor',
          'quarantined/RemediationExhausted',
          'remediating/RemediationStarted',
        ],
      );
      // Nothing proven about the old hardware holds: the tray enrols again, burn-in included, and the case closes.
      await enrol(5);
      const closed = await get<Rma>(`/v1/rma/${rma.id}`);
      assert.equal(closed.state, 'closed', JSON.stringify(closed));
      assert.equal(closed.swap?.length, 1, JSON.stringify(closed.swap));
      const [swapped] = closed.swap!;
      assert.match(swapped!.part, /GPU/);
      assert.ok(swapped!.old && swapped!.new && swapped!.old !== swapped!.new);
      await putInService(5);
      assert.equal(await lifecycleOf(5), 'in_service');
    },
  );
});

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setLifecycle } from '@fleet/db';
import type { FleetLifecycleState } from '@fleet/domain';
import { flashes, manifestFor, waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface JobBody {
  id: string;
  state: string;
  result?: {
    fixedBy?: string;
    state?: string;
    steps?: { step: string; fixed: boolean; skipped?: boolean; message?: string }[];
  } | null;
  error?: { code: string; message: string } | null;
}

const mainLine: FleetLifecycleState[] = ['enrolling', 'enrolled', 'burning_in', 'certified', 'in_service'];

/**
 * The playbook steps that need more than a reset, on a simulated NVL72 rack (docs/day2.md): a GPU fault that only
 * AC loss ends, fixed by `ac_cycle` through the rack's power shelves, and a corrupt firmware image, fixed by
 * `firmware_reflash` to the default manifest; each confirmed by the tray's burn-in on SLURM, after the earlier steps
 * of the default GPU playbook were tried and did not clear it.
 */
describe('remediation playbooks: AC cycle and firmware reflash on a simulated rack', () => {
  const stack = new Stack({
    racks: 1,
    timeScale: 0.01,
    burnIn: { startDeadlineS: 600 },
    enrolment: { burnInHeartbeatTimeoutS: 10 },
    firmware: { taskPollS: 0.2, pushDelayS: 0.2, acStabilizeS: 0.2, powerStateTimeoutS: 60, bmcRecoveryS: 120 },
    remediation: { agent: { verifyTimeoutS: 8, verifyPollS: 1, acOffFloorS: 1, acPollS: 0.5 } },
  });
  const name = (tray: string) => `${stack.siteId}-r001-${tray}`;
  const id = (tray: string) => stack.deviceIds.get(name(tray))!;
  const get = async <T>(path: string) =>
    expectStatus(200)(await stack.api('GET', path, undefined, stack.tokens.viewer)).body as T;
  const lifecycleOf = async (tray: string) =>
    (await get<{ lifecycle: { state: string } }>(`/v1/devices/${id(tray)}`)).lifecycle.state;
  const fixture = randomUUID();
  const move = (deviceId: string, to: FleetLifecycleState) =>
    setLifecycle(stack.dbHandle.db, {
      deviceId,
      to,
      writer: 'lifecycle-workflow',
      jobId: fixture,
      reason: 'TestFixture',
    });
  const fault = async (tray: string, body: Record<string, unknown>) => {
    const res = await fetch(`${stack.simAdminUrl}/bmcs/${name(tray)}/health/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, await res.text());
  };
  const remediate = async (tray: string) => {
    const res = await stack.api(
      'POST',
      `/v1/devices/${id(tray)}/remediate`,
      { reason: 'GPU errors in the job logs', fault_class: 'gpu' },
      stack.tokens.operator,
    );
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const jobId = (res.body as { id: string }).id;
    await waitFor(
      `the remediation of ${tray} ends`,
      async () => !['queued', 'running'].includes((await get<JobBody>(`/v1/jobs/${jobId}`)).state),
      150_000,
    );
    return get<JobBody>(`/v1/jobs/${jobId}`);
  };
  const outcome = (j: JobBody) => j.result?.steps?.map((s) => `${s.step}:${s.fixed}${s.skipped ? ':skipped' : ''}`);

  before(
    async () => {
      await stack.start();
      await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.10.0', { isDefault: true });
      // ct01 and ct02 serve; the rest of the rack is held, so AC may be taken from it.
      for (const tray of ['ct01', 'ct02']) for (const to of mainLine) await move(id(tray), to);
      for (const [n, deviceId] of stack.deviceIds)
        if (n !== name('ct01') && n !== name('ct02')) await move(deviceId, 'quarantined');
    },
    { timeout: 240_000 },
  );
  after(() => stack.stop(), { timeout: 90_000 });

  it(
    'a GPU fault only AC loss ends: HMC reset and power cycle are tried, the shelves cut AC, the burn-in confirms',
    { timeout: 180_000 },
    async () => {
      // ct02 is held too for this one: every other device on the busbar is.
      await move(id('ct02'), 'quarantined');
      await fault('ct01', { part: 'gpu', gpu: 1, clearsOn: 'ac_loss', reason: 'GPU wedged until its rails drop' });
      const done = await remediate('ct01');
      assert.equal(done.state, 'succeeded', JSON.stringify(done.result ?? done.error));
      assert.equal(done.result?.fixedBy, 'ac_cycle');
      assert.deepEqual(outcome(done), ['hmc_reset:false', 'power_cycle:false', 'ac_cycle:true', 'burn_in:true']);
      assert.equal(await lifecycleOf('ct01'), 'in_service');
      // The shelves are back on: the step switches them on again whatever happened.
      const shelf = (await (await fetch(`${stack.simAdminUrl}/bmcs/${name('ps01')}`)).json()) as {
        powerState: string;
      };
      assert.equal(shelf.powerState, 'On');
      const history = await get<{ items: { to: string; reason: string }[] }>(
        `/v1/devices/${id('ct01')}/history?axis=lifecycle&limit=3`,
      );
      assert.deepEqual(
        history.items.map((h) => `${h.to}/${h.reason}`),
        ['in_service/Remediated', 'remediating/RemediationStarted', 'quarantined/Quarantined'],
      );
    },
  );

  it(
    'a corrupt firmware image: AC is not cut under a tray in service, the reflash to the manifest fixes it',
    { timeout: 180_000 },
    async () => {
      await fault('ct02', { part: 'gpu', gpu: 2, clearsOn: 'reflash', reason: 'corrupt GPU firmware image' });
      const flashedBefore = (await flashes(stack, name('ct02'))).length;
      const done = await remediate('ct02');
      assert.equal(done.state, 'succeeded', JSON.stringify(done.result ?? done.error));
      assert.equal(done.result?.fixedBy, 'firmware_reflash');
      assert.deepEqual(outcome(done), [
        'hmc_reset:false',
        'power_cycle:false',
        'ac_cycle:false:skipped',
        'firmware_reflash:true',
        'burn_in:true',
      ]);
      const refused = done.result!.steps!.find((s) => s.step === 'ac_cycle')!;
      assert.match(refused.message!, new RegExp(`ac_cycle refused: .*neither held nor off \\(${name('ct01')}\\)`));
      // The manifest's parts were written to the tray (the simulator's flash log).
      assert.ok((await flashes(stack, name('ct02'))).length > flashedBefore);
      assert.equal(await lifecycleOf('ct02'), 'in_service');
      assert.equal(await lifecycleOf('ct01'), 'in_service', 'the tray in service kept its AC');
    },
  );
});

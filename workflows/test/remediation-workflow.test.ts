import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  defaultFirmwareTimings,
  type AcCyclePlan,
  type AwaitCondition,
  type AwaitDevicesResult,
  type BmcTarget,
  type BurnInInput,
  type HealthFault,
  type PlaybookStep,
  type RemediationInput,
  type RemediationResult,
} from '@fleet/domain';
import type { remediation } from '../src/index.js';
import { activity, bmc, failureOf, memoOf, recorded, startWorkflowTestEnv, type Call } from './workflow-test-env.js';
import type { WorkflowTestEnv } from './workflow-test-env.js';

// The remediation playbook's steps with mocked satellite activities (docs/day2.md).

const tray = bmc('ct-1', 'compute_gb200_nvidia');
const shelves = [bmc('ps-1', 'powershelf_gb200_liteon'), bmc('ps-2', 'powershelf_gb200_liteon')];
const gpu: HealthFault = { class: 'gpu', component: 'GPU_1', severity: 'Critical', message: 'fell off the bus' };
const plan = (over: Partial<AcCyclePlan> = {}): AcCyclePlan => ({
  shelves,
  others: [{ target: bmc('ct-2', 'compute_gb200_nvidia'), name: 'tray-2' }],
  offFloorS: 0,
  pollIntervalS: 0.1,
  ...over,
});

function input(id: string, steps: PlaybookStep[], over: Partial<RemediationInput> = {}): RemediationInput {
  return {
    jobId: id,
    mode: 'remediate',
    target: tray,
    deviceName: 'tray-1',
    reason: 'gpu-fault rule',
    rule: 'gpu-fault',
    fault: gpu,
    playbook: { steps },
    returnTo: 'in_service',
    alreadyQuarantined: false,
    siteId: 'site-1',
    acCycle: plan(),
    burnIn: { name: 'tray-1', tests: ['gpu_stress'], startToCloseS: 30, heartbeatTimeoutS: 10, settleTimeoutS: 5 },
    verifyTimeoutS: 2,
    verifyPollS: 0.1,
    activity,
    ...over,
  };
}

/**
 * A tray whose GPU fault only `clearedBy` ends (as the simulator's clearsOn faults), shelves that cut its AC, other
 * trays in `onTrays` that are On, shelves in `deadShelves` that do not answer, and a burn-in that passes unless told.
 */
function site(opts: {
  clearedBy?: 'ac' | 'reset';
  onTrays?: string[];
  deadShelves?: string[];
  burnIn?: 'pass' | 'fail';
  darkens?: boolean;
}) {
  let faulty = true;
  let ac = true;
  const ids = (ts: BmcTarget[]) => ts.map((t) => t.deviceId);
  const meets = (id: string, c: AwaitCondition): boolean => {
    if (id.startsWith('ps-')) return c === 'reachable' && !opts.deadShelves?.includes(id);
    if (id === tray.deviceId) return c === (ac || opts.darkens === false ? 'reachable' : 'unreachable');
    return c === 'off' ? !opts.onTrays?.includes(id) : true;
  };
  return recorded({
    resetBmc: async ({ target }: { target: BmcTarget }) => {
      if (opts.clearedBy === 'reset') faulty = false;
      return { deviceId: target.deviceId, manager: 'hmc', outageSeen: true, backAfterS: 1 };
    },
    setDevicePower: async ({ target, action }: { target: BmcTarget; action: string }) => {
      if (target.deviceId.startsWith('ps-')) {
        if (action === 'off') ac = false;
        else if (!ac) {
          ac = true;
          if (opts.clearedBy === 'ac') faulty = false;
        }
      }
      return { deviceId: target.deviceId, action, powerState: action === 'off' ? 'Off' : 'On', resetSent: true };
    },
    awaitDevices: async ({ targets, condition }: { targets: BmcTarget[]; condition: AwaitCondition }) => {
      const met = ids(targets).filter((id) => meets(id, condition));
      const notMet = ids(targets)
        .filter((id) => !met.includes(id))
        .map((deviceId) => ({ deviceId, last: null }));
      return { condition, met, notMet, elapsedS: 0 } satisfies AwaitDevicesResult;
    },
    awaitHealthy: async () => ({ reachable: true, faults: faulty ? [gpu] : [] }),
    runBurnIn: async ({ trays }: BurnInInput) => ({
      passed: opts.burnIn !== 'fail',
      verdicts: trays.map((t) => ({
        deviceId: t.deviceId,
        test: 'gpu_stress' as const,
        verdict: opts.burnIn === 'fail' ? ('fail' as const) : ('pass' as const),
        reason: opts.burnIn === 'fail' ? ('TestFailed' as const) : null,
        message: opts.burnIn === 'fail' ? 'GPU_1 errors' : 'ok',
        slurmJobId: 1,
        slurmState: 'COMPLETED',
        slurmReason: null,
      })),
    }),
  });
}

/** One line per call: the activity and what it acted on. */
const trace = (calls: Call[]) =>
  calls
    .filter((c) => c.activity !== 'awaitHealthy')
    .map((c) => {
      const targets = (c.input['targets'] ?? c.input['trays'] ?? [c.input['target']]) as { deviceId: string }[];
      const what = c.input['action'] ?? c.input['condition'] ?? c.input['manager'] ?? '';
      return [c.activity, String(what), targets.map((x) => x.deviceId).join(',')].filter(Boolean).join(' ');
    });
const outcome = (r: RemediationResult | undefined) => r?.steps.map((s) => `${s.step}:${s.fixed}`);

describe('remediation playbook steps with mocked activities', () => {
  let t: WorkflowTestEnv;
  before(async () => (t = await startWorkflowTestEnv()), { timeout: 120_000 });
  after(() => t?.teardown());

  const run = (id: string, i: RemediationInput, activities: Parameters<WorkflowTestEnv['withWorker']>[0]) =>
    t.withWorker(activities, async (taskQueue) => {
      const h = await t.client.workflow.start<typeof remediation>('remediation', {
        taskQueue,
        workflowId: id,
        args: [i],
      });
      try {
        return { result: await h.result(), handle: h, failure: undefined };
      } catch {
        return { result: undefined, handle: h, failure: await failureOf(h) };
      }
    });

  it('a fault only AC loss ends: resets are tried first, then the shelves cut AC, the burn-in confirms', async () => {
    const { activities, calls } = site({ clearedBy: 'ac' });
    const steps: PlaybookStep[] = ['hmc_reset', 'power_cycle', 'ac_cycle', 'firmware_reflash', 'burn_in'];
    const { result, handle } = await run('ac-fix', input('ac-fix', steps), activities);
    assert.equal(result?.fixedBy, 'ac_cycle');
    assert.deepEqual(outcome(result), ['hmc_reset:false', 'power_cycle:false', 'ac_cycle:true', 'burn_in:true']);
    assert.equal(result?.state, 'in_service');
    assert.deepEqual(trace(calls), [
      'resetBmc hmc ct-1',
      'setDevicePower power-cycle ct-1',
      'awaitDevices reachable ps-1,ps-2',
      'awaitDevices off ct-2',
      'setDevicePower off ps-1',
      'setDevicePower off ps-2',
      'awaitDevices unreachable ct-1',
      'setDevicePower on ps-1',
      'setDevicePower on ps-2',
      'awaitDevices reachable ct-1',
      'setDevicePower on ct-1',
      'setDevicePower on ct-1',
      'runBurnIn ct-1',
    ]);
    const burnIn = calls.find((c) => c.activity === 'runBurnIn')!.input as unknown as BurnInInput;
    assert.deepEqual(burnIn.trays, [{ deviceId: 'ct-1', name: 'tray-1' }]);
    assert.equal((await memoOf(handle)).progress?.stage, 'done');
  });

  it('refuses to cut AC while another tray on the shelves is on, and cuts nothing', async () => {
    const { activities, calls } = site({ clearedBy: 'ac', onTrays: ['ct-2'] });
    const { result, failure } = await run('ac-live', input('ac-live', ['ac_cycle']), activities);
    assert.equal(result, undefined);
    assert.equal(failure?.type, 'REMEDIATION_EXHAUSTED');
    assert.ok(!calls.some((c) => c.activity === 'setDevicePower'), 'no shelf was switched');
    assert.ok(!calls.some((c) => c.activity === 'awaitHealthy'), 'a refused step has no health check');
    const memo = await memoOf(t.client.workflow.getHandle('ac-live'));
    const steps = (memo.result as unknown as RemediationResult).steps;
    assert.equal(steps[0]?.skipped, true);
    assert.match(steps[0]!.message!, /^ac_cycle refused: .*neither held nor off \(tray-2\)/);
  });

  it('refuses without a shelf feeding the tray, and when a shelf does not answer', async () => {
    const none = site({ clearedBy: 'ac' });
    const noShelf = input('ac-none', ['ac_cycle'], {
      acCycle: plan({ shelves: [], others: [], refused: 'tray-1 is in no rack: no power shelf feeds it' }),
    });
    await run('ac-none', noShelf, none.activities);
    assert.deepEqual(trace(none.calls), []);
    const dead = site({ clearedBy: 'ac', deadShelves: ['ps-2'] });
    await run('ac-dead', input('ac-dead', ['ac_cycle']), dead.activities);
    assert.deepEqual(trace(dead.calls), ['awaitDevices reachable ps-1,ps-2']);
    for (const [id, why] of [
      ['ac-none', /ac_cycle refused: tray-1 is in no rack/],
      ['ac-dead', /ac_cycle refused: power shelf ps-2 does not answer/],
    ] as const) {
      const memo = await memoOf(t.client.workflow.getHandle(id));
      assert.match((memo.result as unknown as RemediationResult).steps[0]!.message!, why);
      assert.equal(memo.error?.code, 'REMEDIATION_EXHAUSTED');
    }
  });

  it('switches the shelves back on when the tray does not go dark, and the step fails naming why', async () => {
    const { activities, calls } = site({ darkens: false });
    const { failure } = await run('ac-fed', input('ac-fed', ['ac_cycle']), activities);
    assert.equal(failure?.type, 'REMEDIATION_EXHAUSTED');
    assert.deepEqual(trace(calls).slice(-3), [
      'awaitDevices unreachable ct-1',
      'setDevicePower on ps-1',
      'setDevicePower on ps-2',
    ]);
    const memo = await memoOf(t.client.workflow.getHandle('ac-fed'));
    assert.match(
      (memo.result as unknown as RemediationResult).steps[0]!.message!,
      /ac_cycle failed: tray-1 still answers with its shelves off/,
    );
  });

  it('a failed burn-in keeps the fault a reset cleared: held again and escalated to an RMA', async () => {
    const { activities } = site({ clearedBy: 'reset', burnIn: 'fail' });
    const { failure, handle } = await run('burn-fail', input('burn-fail', ['hmc_reset', 'burn_in']), activities);
    assert.equal(failure?.type, 'REMEDIATION_EXHAUSTED');
    assert.match(
      failure!.message,
      /gpu \(GPU_1\) cleared but the burn-in failed \(gpu_stress: TestFailed: GPU_1 errors\)/,
    );
    const memo = await memoOf(handle);
    const result = memo.result as unknown as RemediationResult;
    assert.deepEqual(outcome(result), ['hmc_reset:true', 'burn_in:false']);
    assert.equal(result.state, 'quarantined');
    assert.deepEqual(result.escalated?.faultClass, 'gpu');
  });

  it('the default GPU playbook on a tray in no rack, without a manifest: three steps skip', async () => {
    const { activities, calls } = site({});
    const steps: PlaybookStep[] = ['hmc_reset', 'power_cycle', 'ac_cycle', 'firmware_reflash', 'burn_in'];
    const noRack = input('no-rack', steps, {
      acCycle: plan({ shelves: [], others: [], refused: 'tray-1 is in no rack: no power shelf feeds it' }),
    });
    const { failure, handle } = await run('no-rack', noRack, activities);
    assert.equal(failure?.type, 'REMEDIATION_EXHAUSTED');
    const result = (await memoOf(handle)).result as unknown as RemediationResult;
    assert.deepEqual(
      result.steps.map((s) => `${s.step}:${s.fixed}:${s.skipped ?? false}`),
      [
        'hmc_reset:false:false',
        'power_cycle:false:false',
        'ac_cycle:false:true',
        'firmware_reflash:false:true',
        'burn_in:false:true',
      ],
    );
    assert.deepEqual(result.escalated, { part: 'GPU_1', faultClass: 'gpu', message: 'fell off the bus' });
    assert.equal(calls.filter((c) => c.activity === 'awaitHealthy').length, 2, 'skipped steps are not verified');
  });

  it('skips a reflash without a manifest, and runs the firmware update as a forced child with one', async () => {
    const skip = site({});
    const noManifest = input('fw-none', ['firmware_reflash'], { burnIn: undefined });
    await run('fw-none', noManifest, skip.activities);
    const memo = await memoOf(t.client.workflow.getHandle('fw-none'));
    const step = (memo.result as unknown as RemediationResult).steps[0]!;
    assert.deepEqual(
      [step.skipped, step.message],
      [true, 'firmware_reflash skipped: no firmware manifest for compute_gb200_nvidia'],
    );
    assert.deepEqual(trace(skip.calls), []);

    // The child's first read finds a component missing from the manifest's expected inventory: its failure is the
    // step's, and the health check still follows it.
    const withManifest = site({});
    const reads: Call[] = [];
    const activities = {
      ...withManifest.activities,
      readFirmwareInventory: async (x: { target: BmcTarget }) => {
        reads.push({ activity: 'readFirmwareInventory', input: x });
        return { deviceId: x.target.deviceId, components: [{ id: 'FW_BMC_0', version: '1.0' }] };
      },
    };
    const fw = input('fw-run', ['firmware_reflash'], {
      firmware: {
        manifestId: 'm-1',
        role: 'compute',
        steps: [],
        expectedInventory: ['FW_BMC_0', 'HGX_FW_GPU_1'],
        timings: { ...defaultFirmwareTimings, taskPollS: 1 },
      },
    });
    await run('fw-run', fw, activities);
    assert.equal(reads.length, 1);
    const child = await t.client.workflow.getHandle('fw-run-reflash-0').describe();
    assert.equal(child.type, 'deviceFirmwareUpdateV2');
    const result = (await memoOf(t.client.workflow.getHandle('fw-run'))).result as unknown as RemediationResult;
    assert.match(result.steps[0]!.message!, /firmware_reflash failed: .*HGX_FW_GPU_1/);
    assert.ok(withManifest.calls.some((c) => c.activity === 'awaitHealthy'));
  });
});

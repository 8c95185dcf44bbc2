import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import {
  burnInTests,
  defaultFirmwareTimings,
  lifecycleMemoKey,
  type BurnInInput,
  type BurnInResult,
  type DeviceVerification,
  type EnrolmentDecision,
  type EnrolmentDevice,
  type EnrolmentInput,
  type EnrolmentMode,
  type EnrolmentResult,
  type LifecycleMemo,
  type TopologyVerdict,
} from '@fleet/domain';
import type { enrolment } from '../src/index.js';
import {
  activity,
  bmc,
  endedCancelled,
  eventually,
  failureOf,
  memoOf,
  recorded,
  startWorkflowTestEnv,
  type WorkflowTestEnv,
} from './workflow-test-env.js';

// The enrolment workflow with mocked satellite activities: stages, decisions and the lifecycle it reports. No device
// here has a default manifest, so the firmware baseline starts no child (the e2e test runs real ones).

const device = (id: string, kind: EnrolmentDevice['kind'], nodeType: string): EnrolmentDevice => ({
  target: bmc(id, nodeType),
  name: id,
  kind,
  burnInName: id,
});
const rack = [
  device('ct-1', 'compute', 'compute_gb200_nvidia'),
  device('ct-2', 'compute', 'compute_gb200_nvidia'),
  device('sw-1', 'switch', 'switch_gb200_nvidia'),
  device('ps-1', 'power_shelf', 'powershelf_gb200_liteon'),
];

const input = (mode: EnrolmentMode, devices = rack): EnrolmentInput => ({
  jobId: randomUUID(),
  siteId: 'site-1',
  rackId: 'rack-1',
  mode,
  devices,
  burnIn: { tests: [...burnInTests], startToCloseS: 60, heartbeatTimeoutS: 10 },
  firmware: defaultFirmwareTimings,
  settleTimeoutS: 5,
  activity,
});

/** Mocks whose failures a test sets: devices failing the profile check, trays failing gpu_stress. */
function site(opts: { badProfile?: Set<string>; badGpu?: Set<string> } = {}) {
  const now = () => new Date().toISOString();
  return recorded({
    verifyDevice: async ({ target }: { target: { deviceId: string } }): Promise<DeviceVerification> => {
      const bad = opts.badProfile?.has(target.deviceId);
      const stage = (s: DeviceVerification['stages'][number]['stage'], passed = true) => ({
        stage: s,
        passed,
        ...(passed ? {} : { message: 'GPU_1 part number 999 does not match' }),
        startedAt: now(),
        finishedAt: now(),
      });
      return {
        deviceId: target.deviceId,
        stages: [
          stage('bmc_reachable'),
          stage('credentials_verified'),
          stage('inventory_read'),
          stage('profile_check', !bad),
        ],
      };
    },
    checkRackTopology: async ({ targets }: { targets: unknown[] }): Promise<TopologyVerdict> => ({
      complete: true,
      links: targets.length,
      expectedLinks: targets.length,
      issues: [],
      issuesTotal: 0,
    }),
    setDevicePower: async ({ target }: { target: { deviceId: string } }) => ({
      deviceId: target.deviceId,
      action: 'on',
      powerState: 'On',
      resetSent: true,
    }),
    runBurnIn: async (b: BurnInInput): Promise<BurnInResult> => {
      const verdicts = b.trays.flatMap((t) =>
        b.tests.map((test) => {
          const fail = test === 'gpu_stress' && opts.badGpu?.has(t.deviceId);
          return {
            deviceId: t.deviceId,
            test,
            verdict: fail ? ('fail' as const) : ('pass' as const),
            reason: fail ? ('TestFailed' as const) : null,
            message: fail ? 'GPU_2: Critical (XID 79)' : 'ok',
            slurmJobId: 1,
            slurmState: 'COMPLETED',
            slurmReason: 'None',
          };
        }),
      );
      return { passed: verdicts.every((v) => v.verdict === 'pass'), verdicts };
    },
  });
}

const lifecycleOf = async (h: WorkflowHandle) =>
  (await h.describe()).memo?.[lifecycleMemoKey] as LifecycleMemo | undefined;
const path = (memo: LifecycleMemo | undefined, id: string) => memo?.devices[id]?.moves.map((m) => m.to) ?? [];
const decide = (h: WorkflowHandle, d: Omit<EnrolmentDecision, 'by'>) => h.signal('decision', { ...d, by: 'tester' });
const waitingAt = async (h: WorkflowHandle) => (await memoOf(h)).progress?.decision;

describe('enrolment workflow with mocked activities', () => {
  let t: WorkflowTestEnv;
  before(async () => (t = await startWorkflowTestEnv()), { timeout: 120_000 });
  after(() => t?.teardown());

  const start = (taskQueue: string, i: EnrolmentInput) =>
    t.client.workflow.start<typeof enrolment>('enrolment', { taskQueue, workflowId: i.jobId, args: [i] });

  it('walks a rack through every stage to certified, reporting each move and condition', async () => {
    const { activities, calls } = site();
    const result = await t.withWorker(activities, async (tq) => {
      const h = await start(tq, input('rack'));
      const r = await h.result();
      const memo = await lifecycleOf(h);
      for (const d of rack)
        assert.deepEqual(path(memo, d.target.deviceId), ['enrolling', 'enrolled', 'burning_in', 'certified']);
      assert.equal(memo?.devices['ct-1']?.conditions.BurnInPassed?.status, 'True');
      assert.equal(memo?.devices['sw-1']?.conditions.BurnInPassed?.reason, 'RackTestsPassed');
      assert.equal(memo?.devices['ct-1']?.conditions.BMCReachable?.status, 'True');
      const stages = (await memoOf(h)).timeline!.stages;
      assert.deepEqual(
        stages.map((s) => [s.name, s.status]),
        [
          ['bmc_reachable', 'completed'],
          ['credentials_verified', 'completed'],
          ['inventory_read', 'completed'],
          ['profile_check', 'completed'],
          ['nvlink_topology', 'completed'],
          ['firmware_baseline', 'skipped'],
          ['burn_in', 'completed'],
          ['certified', 'completed'],
        ],
      );
      return r;
    });
    assert.deepEqual([result.certified, result.rejected], [4, 0]);
    // The topology is the trays' (not the shelf's); only compute trays are powered on and burned in.
    const topology = calls.find((c) => c.activity === 'checkRackTopology')!.input['targets'] as { deviceId: string }[];
    assert.deepEqual(topology.map((x) => x.deviceId).sort(), ['ct-1', 'ct-2', 'sw-1']);
    const burn = calls.filter((c) => c.activity === 'runBurnIn');
    assert.equal(burn.length, 1);
    assert.deepEqual(
      (burn[0]!.input['trays'] as { deviceId: string }[]).map((x) => x.deviceId),
      ['ct-1', 'ct-2'],
    );
  });

  it('waits at a failed burn-in; a reject fails that tray and lets the rest be certified', async () => {
    const { activities } = site({ badGpu: new Set(['ct-2']) });
    const result = await t.withWorker(activities, async (tq) => {
      const h = await start(tq, input('rack'));
      await eventually(async () => (await waitingAt(h)) !== undefined, 'the burn-in waits');
      const waiting = (await waitingAt(h))!;
      assert.equal(waiting.stage, 'burn_in');
      assert.match(waiting.devices['ct-2']!, /gpu_stress: TestFailed: GPU_2: Critical \(XID 79\)/);
      assert.equal((await memoOf(h)).progress?.stage, 'awaiting_decision');
      // A decision for another stage is dropped; the job keeps waiting.
      // A decision for another stage, or for an earlier wait of this one (sent twice, or late), is dropped.
      await decide(h, { action: 'reject', stage: 'profile_check', reason: 'wrong stage' });
      await decide(h, { action: 'retry', stage: 'burn_in', since: '2026-01-01T00:00:00.000Z', reason: 'stale' });
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(await waitingAt(h), waiting, 'still waiting, as it was');
      await decide(h, {
        action: 'reject',
        stage: 'burn_in',
        since: waiting.since,
        reason: 'XID 79',
        deviceIds: ['ct-2'],
      });
      const r = await h.result();
      const memo = await lifecycleOf(h);
      assert.deepEqual(path(memo, 'ct-2'), ['enrolling', 'enrolled', 'burning_in', 'failed']);
      assert.deepEqual(path(memo, 'ct-1').at(-1), 'certified');
      assert.equal(memo?.devices['ct-2']?.conditions.BurnInPassed?.status, 'False');
      assert.deepEqual((await memoOf(h)).devices?.['ct-2']?.state, 'failed');
      return r;
    });
    assert.deepEqual([result.certified, result.rejected, result.states['ct-2']], [3, 1, 'failed']);
  });

  it('a retry runs the failed tray again as the next burn-in attempt; a skip passes a failed check', async () => {
    const badGpu = new Set(['ct-1']);
    const { activities, calls } = site({ badGpu, badProfile: new Set(['ct-2']) });
    const result = await t.withWorker(activities, async (tq) => {
      const h = await start(tq, input('rack'));
      await eventually(async () => (await waitingAt(h))?.stage === 'profile_check', 'the profile check waits');
      assert.deepEqual(Object.keys((await waitingAt(h))!.devices), ['ct-2']);
      await decide(h, { action: 'skip', stage: 'profile_check', reason: 'known part revision' });
      await eventually(async () => (await waitingAt(h))?.stage === 'burn_in', 'the burn-in waits');
      badGpu.clear();
      await decide(h, { action: 'retry', stage: 'burn_in', reason: 'reseated the GPU' });
      return h.result();
    });
    assert.equal(result.certified, 4);
    assert.match(result.skipped['ct-2']?.['profile_check'] ?? '', /known part revision \(tester\)/);
    const runs = calls.filter((c) => c.activity === 'runBurnIn').map((c) => c.input as unknown as BurnInInput);
    assert.deepEqual(
      runs.map((r) => [r.attempt, r.trays.map((x) => x.deviceId)]),
      [
        [1, ['ct-1', 'ct-2']],
        [2, ['ct-1']],
      ],
    );
  });

  it('cancelled while waiting, the devices go back where the lifecycle table says', async () => {
    const { activities } = site({ badProfile: new Set(['ct-1']) });
    await t.withWorker(activities, async (tq) => {
      const h = await start(tq, input('rack'));
      await eventually(async () => (await waitingAt(h)) !== undefined, 'the verification waits');
      await h.cancel();
      assert.ok(await endedCancelled(h));
      const memo = await lifecycleOf(h);
      for (const d of rack) assert.deepEqual(path(memo, d.target.deviceId), ['enrolling', 'discovered']);
      assert.equal((await memoOf(h)).error?.code, 'CANCELLED');
    });
  });

  it('a burn-in alone certifies a tray; every device rejected fails the job', async () => {
    const tray = [rack[0]!];
    const { activities } = site({ badGpu: new Set(['ct-1']) });
    await t.withWorker(activities, async (tq) => {
      const h = await start(tq, input('burn_in', tray));
      await eventually(async () => (await waitingAt(h)) !== undefined, 'the burn-in waits');
      await decide(h, { action: 'reject', stage: 'burn_in', reason: 'dead GPU' });
      const failure = await failureOf(h);
      assert.equal(failure.type, 'ALL_REJECTED');
      assert.deepEqual(path(await lifecycleOf(h), 'ct-1'), ['burning_in', 'failed']);
    });
    const passing = site();
    const result = await t.withWorker(passing.activities, async (tq) =>
      start(tq, input('burn_in', tray)).then((h) => h.result()),
    );
    assert.deepEqual((result as EnrolmentResult).states, { 'ct-1': 'certified' });
    assert.equal(passing.calls.filter((c) => c.activity === 'verifyDevice').length, 0, 'no verification');
  });
});

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildWorkflowBundle } from '@fleet/satellite';
import { DefaultLogger } from '@temporalio/worker';
import { duplicates, flashes, installed, manifestFor, waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';
import { upgradePatchId } from '../upgrade/patch-id.js';

type Campaign = { id: string; state: string; progress?: { stage?: string; message?: string } };
type HistoryEvent = Record<string, unknown>;

/** Patch ids of the SDK's patch markers (`core_patch`; their details are plain JSON, which the codec leaves alone). */
function patchIds(events: HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const marker = e['markerRecordedEventAttributes'] as
      { markerName?: string; details?: Record<string, { payloads?: { data?: string }[] }> } | undefined;
    const data = marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    return data === undefined ? [] : [(JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id];
  });
}

/**
 * Issue 19, safe upgrades: a campaign started on version N of the workflows survives the satellite's upgrade to N+1
 * when N+1's change is behind `patched()` (workflows/README.md, "Upgrades"), and visibly does not without it.
 */
describe('satellite upgrade in the middle of a firmware campaign', () => {
  const stack = new Stack({
    bmcs: 4,
    timeScale: 0.005,
    firmware: { taskPollS: 0.2, pushDelayS: 0.2, acStabilizeS: 0.2, powerStateTimeoutS: 30, bmcRecoveryS: 60 },
    // Encrypted histories are never recorded (FLEET_RECORD_HISTORIES): these carry the test-only patch marker, which
    // the real workflow code would not replay, so they must not reach workflows/test/histories.
    payloadEncryption: true,
  });
  const bundles = { patched: '', unpatched: '' };

  before(
    async () => {
      await stack.start();
      await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.10.0', { isDefault: true });
      for (const variant of ['patched', 'unpatched'] as const) {
        const entry = variant === 'patched' ? 'workflows-next.ts' : 'workflows-next-unpatched.ts';
        bundles[variant] = join(stack.dir, `workflow-bundle-next-${variant}.js`);
        await buildWorkflowBundle(bundles[variant], {
          workflowsPath: fileURLToPath(new URL(`../upgrade/${entry}`, import.meta.url)),
          logger: new DefaultLogger('WARN'),
        });
      }
    },
    { timeout: 240_000 },
  );
  after(() => stack.stop(), { timeout: 60_000 });

  const jobOf = async (id: string) =>
    (await stack.api('GET', `/v1/jobs/${id}`, undefined, stack.tokens.viewer)).body as Campaign;
  /** A workflow's history in the JSON form `temporal workflow show` writes: enums by name, bytes in base64. */
  const historyOf = (id: string) =>
    stack.withTemporal(
      async (c) => JSON.parse(JSON.stringify((await c.workflow.getHandle(id).fetchHistory()).events)) as HistoryEvent[],
    );
  const flashedBmcs = async () =>
    (await Promise.all(stack.bmcs.map(async (b) => ((await flashes(stack, b.id)).length ? [b.id] : [])))).flat();
  const tookNewPath = (events: HistoryEvent[]) => ({
    marker: patchIds(events).includes(upgradePatchId),
    timer: events.some((e) => e['timerStartedEventAttributes']),
  });

  /** Stops the site's satellite gracefully and starts it on the workflow bundle given. */
  async function upgradeSatellite(workflowBundlePath: string): Promise<void> {
    assert.equal(await stack.satellite.stop(), 0, 'graceful exit');
    const logged = stack.satellite.output.length;
    await stack.startSatellite(stack.siteId, { workflowBundlePath });
    assert.ok(stack.satellite.output.slice(logged).includes(JSON.stringify(workflowBundlePath)), 'runs that bundle');
  }

  it(
    'an upgrade without patched() stops the running campaign with a nondeterminism failure; with patched() it ' +
      'finishes on the old path, every device updated once, and a campaign started after it takes the new path',
    { timeout: 300_000 },
    async () => {
      const created = expectStatus(202)(
        await stack.api(
          'POST',
          '/v1/firmware-campaigns',
          {
            name: 'gb200 25.10 across an upgrade',
            site_id: stack.siteId,
            policy: { canarySize: 1, waveSize: 3, maxConcurrentPerSite: 2, failureBudget: 0 },
          },
          stack.tokens.operator,
        ),
      ).body as { id: string };
      const id = created.id;
      await waitFor(
        'the canary to finish and the approval gate',
        async () => (await jobOf(id)).progress?.stage === 'awaiting_approval',
        90_000,
      );
      const canary = await flashedBmcs();
      assert.equal(canary.length, 1, 'only the canary was updated before approval');

      // Version N+1 without patched(): the approval wakes the campaign, whose replay meets a timer where its history
      // started the canary.
      await upgradeSatellite(bundles.unpatched);
      expectStatus(202)(await stack.api('POST', `/v1/firmware-campaigns/${id}/approve`, {}, stack.tokens.operator));
      let failure: HistoryEvent | undefined;
      await waitFor(
        'a workflow task failure of the campaign',
        async () => {
          failure = (await historyOf(id)).find((e) => e['workflowTaskFailedEventAttributes']);
          return failure !== undefined;
        },
        60_000,
      );
      const failed = failure!['workflowTaskFailedEventAttributes'] as {
        cause?: string;
        failure?: { message?: string };
      };
      assert.equal(failed.cause, 'WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR', JSON.stringify(failed));
      assert.match(failed.failure?.message ?? '', /Nondeterminism error/);
      // It stays stuck: no wave starts, however long the broken version runs.
      await new Promise((r) => setTimeout(r, 3_000));
      assert.deepEqual(await flashedBmcs(), canary, 'no device updated on the broken version');
      const stuck = await historyOf(id);
      assert.equal(stuck.filter((e) => e['startChildWorkflowExecutionInitiatedEventAttributes']).length, 1);
      assert.equal((await jobOf(id)).progress?.stage, 'awaiting_approval');

      // Version N+1 with patched(): the same campaign replays its old path and goes on from the approval.
      await upgradeSatellite(bundles.patched);
      const done = await stack.waitForJob(id, 180_000);
      assert.equal(done['state'], 'succeeded', JSON.stringify(done));
      for (const { id: bmc } of stack.bmcs) {
        const list = await flashes(stack, bmc);
        assert.ok(list.length > 0, `${bmc} updated`);
        assert.deepEqual(duplicates(list), [], `${bmc} flashed twice`);
        assert.equal((await installed(stack, bmc)).get('FW_BMC_0'), '25.10.0', bmc);
      }
      assert.deepEqual(tookNewPath(await historyOf(id)), { marker: false, timer: false }, 'the old path');

      // A campaign started on N+1 runs the change: the patch marker, then its timer.
      const next = await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.11.0');
      const one = stack.bmcs[0]!.id;
      const later = expectStatus(202)(
        await stack.api(
          'POST',
          '/v1/firmware-campaigns',
          {
            name: 'gb200 25.11 after the upgrade',
            site_id: stack.siteId,
            device_ids: [stack.deviceIds.get(one)!],
            manifests: { compute_gb200_nvidia: next.manifestId },
            policy: { canarySize: 0, autoApprove: true },
          },
          stack.tokens.operator,
        ),
      ).body as { id: string };
      const afterDone = await stack.waitForJob(later.id, 120_000);
      assert.equal(afterDone['state'], 'succeeded', JSON.stringify(afterDone));
      assert.deepEqual(tookNewPath(await historyOf(later.id)), { marker: true, timer: true }, 'the new path');
      assert.equal((await installed(stack, one)).get('FW_BMC_0'), '25.11.0');
      assert.deepEqual(duplicates(await flashes(stack, one)), [], `${one} flashed twice`);
    },
  );
});

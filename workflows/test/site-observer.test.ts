import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  observerMemoKey,
  observerSettingsSignalName,
  type ObserveSiteInput,
  type ObserveSiteResult,
} from '@fleet/domain';
import {
  activityError,
  endedCancelled,
  eventually,
  gate,
  recorded,
  startWorkflowTestEnv,
  type WorkflowTestEnv,
} from './workflow-test-env.js';

const settings: ObserveSiteInput = { siteId: 'obs-01', intervalS: 1, concurrency: 10, confirmations: 3, runForS: 10 };
const done: ObserveSiteResult = { cycles: 1, delivered: 0, slowestCycleS: 0 };

describe('siteObserver with stub activities', () => {
  let env: WorkflowTestEnv;
  before(async () => (env = await startWorkflowTestEnv()), { timeout: 120_000 });
  after(async () => env?.teardown());

  it('runs observeSite after observeSite, and continues as new with its memo after a day of runs', async () => {
    const { activities, calls } = recorded({ observeSite: async () => done });
    await env.withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start('siteObserver', {
        taskQueue,
        workflowId: `observer-${taskQueue}`,
        args: [settings],
        memo: { [observerMemoKey]: settings },
      });
      await eventually(() => calls.length > 24, 'the observer continued as new', 30_000);
      const described = await env.client.workflow.getHandle(handle.workflowId).describe();
      assert.notEqual(described.runId, handle.firstExecutionRunId, 'a new run');
      assert.deepEqual(described.memo?.[observerMemoKey], settings, 'the settings carried to the new run');
      // A day of hourly runs: a handful of events each, and never one per sample.
      const first = await env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).describe();
      assert.ok(first.historyLength <= 24 * 6 + 6, `first run's history ${first.historyLength} events`);
      await handle.cancel();
      assert.ok(await endedCancelled(env.client.workflow.getHandle(handle.workflowId)));
    });
  });

  it('new settings cancel the running observation and start the next with them', async () => {
    const seen: ObserveSiteInput[] = [];
    const release = gate();
    const { activities } = recorded({
      // Observes until the test ends, as the real one does for runForS; the workflow does not wait for a cancelled one.
      observeSite: async (input: ObserveSiteInput) => {
        seen.push(input);
        await release.opened;
        return done;
      },
    });
    await env.withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start('siteObserver', {
        taskQueue,
        workflowId: `observer-${taskQueue}`,
        args: [settings],
      });
      await eventually(() => seen.length === 1, 'the first observation started');
      const faster = { ...settings, intervalS: 5, concurrency: 50 };
      await handle.signal(observerSettingsSignalName, faster);
      await eventually(() => seen.length === 2, 'the observation restarted');
      assert.deepEqual(seen[1], faster);
      assert.deepEqual((await handle.describe()).memo?.[observerMemoKey], faster);
      await handle.cancel();
      assert.ok(await endedCancelled(handle));
      release.open();
    });
  });

  it('a site that cannot observe (no hub access) fails the observer instead of retrying for ever', async () => {
    const { activities, calls } = recorded({
      observeSite: async () => {
        throw activityError('FAILED_PRECONDITION', 'the satellite has no hub access');
      },
    });
    await env.withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start('siteObserver', {
        taskQueue,
        workflowId: `observer-${taskQueue}`,
        args: [settings],
      });
      await assert.rejects(handle.result(), (err: Error) => {
        assert.match(String(((err.cause as Error | undefined)?.cause as Error | undefined)?.message), /no hub access/);
        return true;
      });
      assert.equal(calls.length, 1);
    });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { workflowTypeFor } from '@fleet/domain';
import { loadHistories, replayFailures, workflowCode } from './replay-helpers.js';

// Quiet replay workers: a nondeterminism comes back as a result's error, not as log lines.
Runtime.install({ logger: new DefaultLogger('WARN') });

/** Workflow types with no recorded history, and why (the README says how to record one). */
const notRecorded: Record<string, string> = {};

describe('workflow replay over the recorded histories in workflows/test/histories', () => {
  const histories = loadHistories();

  it('has a history for every workflow type, and campaign runs that continued as new', () => {
    const recorded = new Set(histories.map((h) => h.workflowType));
    const missing = Object.values(workflowTypeFor).filter((t) => !recorded.has(t) && !(t in notRecorded));
    assert.deepEqual(missing, [], 'record them: see "Recording workflow histories" in the README');
    const continued = histories.filter(
      (h) => h.history.events.at(-1)?.['eventType'] === 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW',
    );
    // The campaign's runs from before and after its memo coalescing patch (see workflows/README.md).
    assert.deepEqual([...new Set(continued.map((h) => h.workflowType))], ['firmwareCampaign']);
  });

  it(
    'replays every history against the current workflow code without nondeterminism',
    { timeout: 120_000 },
    async () => {
      assert.deepEqual(await replayFailures(workflowCode(), histories), []);
    },
  );
});

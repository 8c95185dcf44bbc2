import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { loadHistories, replayFailures } from './replay-helpers.js';

Runtime.install({ logger: new DefaultLogger('WARN') });

const workflowsDir = fileURLToPath(new URL('..', import.meta.url));
const signature = /export async function devicePower\([^)]*\)[^{]*\{/;

/**
 * The replay test's own test: a scratch copy of the workflow source where devicePower starts a timer before its
 * first command. Running workflows recorded before that change must not replay unless it is behind `patched()`.
 */
describe('replay catches a workflow change that running workflows cannot survive', () => {
  let scratch: string;
  const devicePower = loadHistories().filter((h) => h.workflowType === 'devicePower');

  // Inside workflows/ so the copy resolves @temporalio/workflow and @fleet/domain like the original.
  before(() => {
    scratch = mkdtempSync(join(workflowsDir, '.replay-scratch-'));
    cpSync(join(workflowsDir, 'src'), scratch, { recursive: true });
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  /** Bundles the scratch copy with `change` inserted at the top of devicePower's body. */
  async function bundleWith(change: string): Promise<{ workflowBundle: { code: string } }> {
    const file = join(scratch, 'device-power.ts');
    const source = readFileSync(join(workflowsDir, 'src', 'device-power.ts'), 'utf8');
    assert.match(source, signature, 'devicePower is where this test expects it');
    writeFileSync(
      file,
      `import * as scratchWf from '@temporalio/workflow';\n${source.replace(signature, (m) => `${m}\n  ${change}`)}`,
    );
    const { code } = await bundleWorkflowCode({
      workflowsPath: join(scratch, 'index.ts'),
      logger: new DefaultLogger('WARN'),
    });
    return { workflowBundle: { code } };
  }

  it(
    'a new timer before the first command, without patched(): DeterminismViolationError',
    { timeout: 120_000 },
    async () => {
      assert.ok(devicePower.length > 0, 'a recorded devicePower history');
      const failures = await replayFailures(await bundleWith('await scratchWf.sleep(1);'), devicePower);
      assert.equal(failures.length, devicePower.length);
      for (const f of failures) assert.match(f, /DeterminismViolationError/);
    },
  );

  it('the same change behind patched(): the recorded histories still replay', { timeout: 120_000 }, async () => {
    const failures = await replayFailures(
      await bundleWith("if (scratchWf.patched('scratch-timer')) await scratchWf.sleep(1);"),
      devicePower,
    );
    assert.deepEqual(failures, []);
  });
});

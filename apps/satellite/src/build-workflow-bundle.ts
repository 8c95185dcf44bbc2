import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type Logger } from '@temporalio/worker';
import { failureConverterPath } from '@fleet/temporal';

/**
 * Prebuilds the workflow bundle so production workers (and tests that restart
 * workers) start without running webpack: `worker.workflowBundlePath` in the config.
 * The SDK bundler also rejects any module the workflow sandbox must not load. `workflowsPath` is the entry module,
 * @fleet/workflows unless a test bundles another version of them (test/e2e/satellite-upgrade.e2e.test.ts).
 */
export async function buildWorkflowBundle(
  outFile: string,
  { logger, workflowsPath }: { logger?: Logger; workflowsPath?: string } = {},
): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: workflowsPath ?? fileURLToPath(import.meta.resolve('@fleet/workflows')),
    failureConverterPath,
    ...(logger ? { logger } : {}),
  });
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, code);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ?? 'dist/workflow-bundle.js';
  await buildWorkflowBundle(out);
  console.log(JSON.stringify({ msg: 'workflow bundle written', path: out }));
}

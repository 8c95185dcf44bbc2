import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';

export const historiesDir = fileURLToPath(new URL('./histories', import.meta.url));

export interface RecordedHistory {
  file: string;
  workflowId: string;
  workflowType: string;
  history: { events: Record<string, unknown>[] };
}

/** Every history under `dir`, as test/harness/record-histories.ts wrote them (CLI history JSON plus the ID). */
export function loadHistories(dir = historiesDir): RecordedHistory[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const { workflowId, events } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
        workflowId: string;
        events: Record<string, unknown>[];
      };
      const started = events[0]?.['workflowExecutionStartedEventAttributes'] as
        { workflowType?: { name?: string } } | undefined;
      const workflowType = started?.workflowType?.name;
      if (!workflowType) throw new Error(`${join(dir, file)}: the first event is not a workflow start`);
      return { file, workflowId, workflowType, history: { events } };
    });
}

/** Replays each history against the workflow code; returns `file: error` for every one that does not replay cleanly. */
export async function replayFailures(code: ReplayWorkerOptions, histories: RecordedHistory[]): Promise<string[]> {
  const fileOf = new Map(histories.map((h) => [h.workflowId, h.file]));
  const failures: string[] = [];
  const results = Worker.runReplayHistories(
    code,
    histories.map(({ workflowId, history }) => ({ workflowId, history })),
  );
  for await (const r of results)
    if (r.error) failures.push(`${fileOf.get(r.workflowId)}: ${r.error.name}: ${r.error.message}`);
  return failures;
}

/** The workflow code as the satellite runs it: the test run's prebuilt bundle, else bundled here from the source. */
export function workflowCode(): ReplayWorkerOptions {
  const bundle = process.env['FLEET_TEST_WORKFLOW_BUNDLE'];
  return bundle
    ? { workflowBundle: { codePath: bundle } }
    : { workflowsPath: fileURLToPath(new URL('../src/index.ts', import.meta.url)) };
}

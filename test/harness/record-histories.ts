import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { temporalCliPath } from '@fleet/temporal';

const run = promisify(execFile);

/** A closed run to keep, one per file name. */
interface Pick {
  workflowId: string;
  runId: string;
  rank: number;
  length: number;
}

/** Completed beats failed or cancelled, then the longer history (more paths replayed) wins. */
function isBetter(a: Pick, b: Pick): boolean {
  return a.rank !== b.rank ? a.rank < b.rank : a.length > b.length;
}

const rankOf: Record<string, number | undefined> = { COMPLETED: 0, CONTINUED_AS_NEW: 0, FAILED: 1, CANCELLED: 1 };

/**
 * Opt-in (FLEET_RECORD_HISTORIES=<dir>): saves one finished history per workflow type that ran on this Temporal
 * server into `<dir>/<workflowType>.json`, and a run that continued as new into `<workflowType>-continued-as-new.json`,
 * for workflows/test/replay.test.ts. The file is what `temporal workflow show -o json` writes plus the workflow ID
 * (replay needs it: histories do not carry it). Call it before the server stops; it does nothing without the variable.
 */
export async function recordHistories(address: string): Promise<void> {
  const dir = process.env['FLEET_RECORD_HISTORIES'];
  if (!dir) return;
  const connection = await Connection.connect({ address });
  const picks = new Map<string, Pick>();
  try {
    const client = new Client({ connection });
    for await (const wf of client.workflow.list({ query: 'ExecutionStatus != "Running"' })) {
      const rank = rankOf[wf.status.name];
      if (rank === undefined) continue;
      const name = wf.status.name === 'CONTINUED_AS_NEW' ? `${wf.type}-continued-as-new` : wf.type;
      const pick = { workflowId: wf.workflowId, runId: wf.runId, rank, length: wf.historyLength };
      const held = picks.get(name);
      if (!held || isBetter(pick, held)) picks.set(name, pick);
    }
  } finally {
    await connection.close();
  }
  mkdirSync(dir, { recursive: true });
  for (const [name, { workflowId, runId }] of picks) {
    const args = ['workflow', 'show', '--address', address, '-w', workflowId, '-r', runId, '--output', 'json'];
    const { stdout } = await run(temporalCliPath(), args, { maxBuffer: 64 << 20 });
    const history = JSON.parse(stdout) as { events: unknown[] };
    writeFileSync(join(dir, `${name}.json`), `${JSON.stringify({ workflowId, events: history.events }, null, 2)}\n`);
  }
}

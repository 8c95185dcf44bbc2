import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionJournal } from '../../src/journal/action-journal.js';

/** A journal of its own in a fresh temporary folder, as the satellite keeps one in its data dir. */
export function openTestJournal(): Promise<ActionJournal> {
  return ActionJournal.open(join(mkdtempSync(join(tmpdir(), 'fleet-journal-')), 'action-journal.jsonl'), {
    keepMs: 86_400_000,
  });
}

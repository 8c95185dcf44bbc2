import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** One device action that went out, by the activity that sent it. */
export interface JournalEntry {
  /** The activity across its attempts: workflow id, run id and activity id (journalKey). */
  key: string;
  deviceId: string;
  /** What was sent, e.g. `reset:PowerCycle` or `manager-reset:bmc`. */
  action: string;
  /** When, in ms since the epoch. */
  at: number;
  /** A checkpoint's content (entries of `activityCheckpoints`). */
  data?: unknown;
}

/** The same for every attempt of one activity, and for no other activity. */
export function journalKey(info: {
  workflowExecution?: { workflowId: string; runId: string } | undefined;
  activityId: string;
}): string {
  const run = info.workflowExecution;
  if (!run) throw new Error(`activity ${info.activityId} runs outside a workflow: no journal key`);
  return `${run.workflowId}/${run.runId}/${info.activityId}`;
}

/**
 * The satellite's own record of device actions it sent that must not be sent twice (a power cycle, a controller
 * reset), kept on its disk beside Temporal's heartbeat details. A heartbeat carries "sent" to the next attempt only
 * when it reaches Temporal; when the site is cut off from Temporal, or the process dies, right after the request went
 * out, the next attempt would find no trace and send it again. An entry is appended and flushed to disk once the
 * device accepted the request, before anything else: only a crash between the device's answer and that flush can
 * still lose one (docs/deployment.md, "A site cut off").
 *
 * One JSON line per entry; entries older than `keepMs` (longer than any activity retries) are dropped when the
 * journal opens.
 */
export class ActionJournal {
  private readonly locks = new Map<string, Promise<unknown>>();

  private constructor(
    private readonly file: FileHandle,
    private readonly entries: Map<string, JournalEntry>,
  ) {}

  static async open(path: string, { keepMs }: { keepMs: number }): Promise<ActionJournal> {
    const kept = new Map<string, JournalEntry>();
    const since = Date.now() - keepMs;
    for (const line of (await readFile(path, 'utf8').catch(notFoundAsEmpty)).split('\n')) {
      const entry = parseLine(line);
      if (entry && entry.at >= since) kept.set(entry.key, entry);
    }
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    // Rewritten with only what is kept, atomically: a crash leaves the old file or the new one.
    const tmp = `${path}.compact`;
    await rm(tmp, { force: true });
    const compacted = await open(tmp, 'wx', 0o600);
    try {
      await compacted.writeFile([...kept.values()].map((e) => `${JSON.stringify(e)}\n`).join(''));
      await compacted.sync();
    } finally {
      await compacted.close();
    }
    await rename(tmp, path);
    return new ActionJournal(await open(path, 'a', 0o600), kept);
  }

  /**
   * Runs `fn` alone among the callers with this key. Two attempts of one activity can run at once on the satellite: a
   * retry, and the attempt it replaced whose task reached the satellite late (held in a cut link); each reads the
   * device and the journal and may send, so they decide one after the other, the second seeing what the first
   * journaled.
   */
  async exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(key) ?? Promise.resolve();
    const run = before.then(fn);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.locks.get(key) === settled) this.locks.delete(key);
    }
  }

  /** What this activity sent in an earlier attempt, if anything. */
  sent(key: string): JournalEntry | undefined {
    return this.entries.get(key);
  }

  async record(entry: Omit<JournalEntry, 'at'>): Promise<void> {
    const full = { ...entry, at: Date.now() };
    this.entries.set(full.key, full);
    await this.file.appendFile(`${JSON.stringify(full)}\n`);
    await this.file.datasync();
  }

  async close(): Promise<void> {
    await this.file.close();
  }
}

/** The checkpoint of the running activity (its progress across attempts), kept in the journal beside its actions. */
export interface ActivityCheckpoints {
  /** What an earlier attempt of this activity saved last, if anything. */
  load(): unknown;
  save(deviceId: string, data: unknown): Promise<void>;
}

/**
 * Checkpoints of the running activity in the journal: a heartbeat carries one to the next attempt only when it reaches
 * Temporal; this copy survives a cut or a crash of the satellite (its data dir kept).
 */
export function activityCheckpoints(
  journal: ActionJournal,
  info: () => Parameters<typeof journalKey>[0],
): ActivityCheckpoints {
  const key = () => `${journalKey(info())}#checkpoint`;
  return {
    load: () => journal.sent(key())?.data,
    save: (deviceId, data) => journal.record({ key: key(), deviceId, action: 'checkpoint', data }),
  };
}

function notFoundAsEmpty(err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return '';
  throw err;
}

/** A line a crash cut short (the one entry a crash can lose), or anything else unreadable, is skipped. */
function parseLine(line: string): JournalEntry | undefined {
  if (!line.trim()) return undefined;
  try {
    const e = JSON.parse(line) as Partial<JournalEntry>;
    if (typeof e.key === 'string' && typeof e.at === 'number' && typeof e.deviceId === 'string')
      return {
        key: e.key,
        deviceId: e.deviceId,
        action: String(e.action),
        at: e.at,
        ...('data' in e ? { data: e.data } : {}),
      };
  } catch {
    // torn write
  }
  return undefined;
}

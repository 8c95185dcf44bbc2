import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Updates queued per file: a read-modify-write must never interleave with another in this process. */
const queues = new Map<string, Promise<unknown>>();

/** A JSON object file's content, `{}` when the file does not exist yet. */
export async function readJsonObject(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not chained: the parser's message quotes the content, which can be a secret.
    throw new Error(`${path} is not a JSON object file`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`${path} is not a JSON object file`);
  return parsed as Record<string, unknown>;
}

/**
 * Read-modify-write of a JSON object file that holds secrets: the new content goes to a
 * temporary file created with mode 0600, is flushed, and is renamed over the old one, so a
 * reader or a crash sees the old file or the new one, never a mix. The new file's mtime is
 * kept above the old one's, since readers that cache by mtime (the file secret store) would
 * miss a rewrite landing within the same clock tick.
 */
export function updateJsonObject(path: string, mutate: (entries: Record<string, unknown>) => void): Promise<void> {
  const run = (queues.get(path) ?? Promise.resolve()).then(async () => {
    const entries = await readJsonObject(path);
    mutate(entries);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const previousMtimeMs = (await stat(path).catch(() => undefined))?.mtimeMs ?? 0;
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      const file = await open(tmp, 'wx', 0o600);
      try {
        await file.writeFile(`${JSON.stringify(entries, null, 2)}\n`);
        const mtime = new Date(Math.max(Date.now(), Math.floor(previousMtimeMs) + 1));
        await file.utimes(mtime, mtime);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  });
  const settled = run.catch(() => undefined);
  queues.set(path, settled);
  void settled.then(() => {
    if (queues.get(path) === settled) queues.delete(path);
  });
  return run;
}

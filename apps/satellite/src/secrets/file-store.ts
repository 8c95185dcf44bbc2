import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { UnknownCredentialError, type SecretStore } from './secret-store.js';

const SecretsFile = z.record(
  z.string(),
  z.object({ username: z.string().min(1), password: z.string().min(1) }).strict(),
);

/**
 * A JSON file `{ "<ref>": { "username": ..., "password": ... } }`, mode 0600 on the
 * satellite host. Re-read when it changes, so rotation needs no restart.
 */
export function createFileSecretStore(path: string): SecretStore {
  let cache: { mtimeMs: number; entries: z.infer<typeof SecretsFile> } | undefined;
  const load = async () => {
    const { mtimeMs } = await stat(path);
    if (cache?.mtimeMs !== mtimeMs) {
      const parsed = SecretsFile.safeParse(JSON.parse(await readFile(path, 'utf8')));
      // The zod message lists paths only, never values.
      if (!parsed.success)
        throw new Error(
          `secret file ${path} is malformed: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`,
        );
      cache = { mtimeMs, entries: parsed.data };
    }
    return cache.entries;
  };
  return {
    resolve: async (ref) => {
      const entry = (await load())[ref];
      if (!entry) throw new UnknownCredentialError(ref);
      return entry;
    },
  };
}

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `relPath` in the nearest folder above the module at `moduleUrl` that holds it, else undefined: a repository file
 * (the migrations, the built web console, the project's Temporal CLI) found alike from a module's source
 * (packages/db/src) and from the bundle it was compiled into (apps/hub/dist), whatever the depth of either.
 */
export function repositoryPath(moduleUrl: string, relPath: string): string | undefined {
  for (let dir = dirname(fileURLToPath(moduleUrl)); ; dir = dirname(dir)) {
    const candidate = join(dir, relPath);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

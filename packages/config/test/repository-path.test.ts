import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { repositoryPath } from '../src/repository-path.js';

describe('repositoryPath', () => {
  // A repository as a source tree and as an image lay it out: the same file, modules at different depths.
  const root = mkdtempSync(join(tmpdir(), 'fleet-repo-path-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'migrations/meta'), { recursive: true });
  writeFileSync(join(root, 'migrations/meta/_journal.json'), '{}');
  const moduleAt = (rel: string) => pathToFileURL(join(root, rel)).href;

  it('finds the file in the nearest folder above the module, from a source and from a bundle', () => {
    const journal = join(root, 'migrations/meta/_journal.json');
    assert.equal(repositoryPath(moduleAt('packages/db/src/migrate.ts'), 'migrations/meta/_journal.json'), journal);
    assert.equal(repositoryPath(moduleAt('apps/hub/dist/migrate-cli.js'), 'migrations/meta/_journal.json'), journal);
    assert.equal(repositoryPath(moduleAt('main.js'), 'migrations/meta/_journal.json'), journal);
  });

  it('prefers the nearer folder, and is undefined when no folder above holds the file', () => {
    mkdirSync(join(root, 'apps/hub/migrations/meta'), { recursive: true });
    writeFileSync(join(root, 'apps/hub/migrations/meta/_journal.json'), '{}');
    assert.equal(
      repositoryPath(moduleAt('apps/hub/dist/main.js'), 'migrations/meta/_journal.json'),
      join(root, 'apps/hub/migrations/meta/_journal.json'),
    );
    assert.equal(repositoryPath(moduleAt('apps/hub/dist/main.js'), 'no-such-dir/file.json'), undefined);
  });
});

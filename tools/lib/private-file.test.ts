import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { writePrivateFile } from './private-file.js';

describe('writePrivateFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'private-file-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the file 0600', () => {
    const file = join(dir, 'new.json');
    writePrivateFile(file, '{"password":"x"}');
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it('makes a world-readable file an earlier run left 0600 (the dev stack rewrites its configs on every start)', () => {
    const file = join(dir, 'simulator.json');
    writeFileSync(file, '{}', { mode: 0o644 });
    writePrivateFile(file, '{"password":"y"}');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(readFileSync(file, 'utf8'), '{"password":"y"}');
  });
});

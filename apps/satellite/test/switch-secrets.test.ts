import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFileSecretStore } from '../src/secrets/file-store.js';
import { PendingPasswords } from '../src/credentials/pending-passwords.js';
import { createSecretWriter, previousRef, SecretStoreReadOnlyError } from '../src/credentials/secret-writer.js';

describe('writable secret store and pending passwords', () => {
  let dir: string;
  let path: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-secrets-'));
    path = join(dir, 'secrets.json');
    writeFileSync(path, JSON.stringify({ 'bmc/default': { username: 'root', password: 'bmc-pw' } }), { mode: 0o644 });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`rewrites the file atomically with mode 0600, keeps other entries, and the file store reads every write at \
once`, async () => {
    const writer = createSecretWriter({ provider: 'file', path });
    const reader = createFileSecretStore(path);
    assert.equal((await reader.resolve('bmc/default')).password, 'bmc-pw');
    for (let i = 0; i < 5; i++) {
      // Back to back, within one mtime tick: the reader's mtime cache must still see each one.
      await writer.write({
        'switch/a': { username: 'admin', password: `pw-${i}` },
        [previousRef('switch/a')]: { username: 'admin', password: `pw-${i - 1}` },
      });
      assert.equal((await reader.resolve('switch/a')).password, `pw-${i}`);
    }
    assert.equal((await reader.resolve('switch/a#previous')).password, 'pw-3');
    assert.equal((await reader.resolve('bmc/default')).password, 'bmc-pw');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    await writer.write({ 'switch/a#previous': null });
    assert.equal(JSON.parse(readFileSync(path, 'utf8'))['switch/a#previous'], undefined);
    assert.deepEqual(readdirSync(dir).sort(), ['secrets.json'], 'no temporary file left behind');
  });

  it('serialises concurrent writes: none is lost', async () => {
    const writer = createSecretWriter({ provider: 'file', path });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        writer.write({ [`switch/c${i}`]: { username: 'admin', password: `c-${i}` } }),
      ),
    );
    const entries = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    for (let i = 0; i < 20; i++) assert.deepEqual(entries[`switch/c${i}`], { username: 'admin', password: `c-${i}` });
  });

  it('the environment cannot be written', async () => {
    const writer = createSecretWriter({ provider: 'env', prefix: 'FLEET_SECRET' });
    assert.throws(() => writer.assertWritable(), SecretStoreReadOnlyError);
    await assert.rejects(writer.write({ x: null }), SecretStoreReadOnlyError);
  });

  it('a malformed file is refused without quoting it', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"switch/x": {"password": "leaked-secret"');
    const err = await createSecretWriter({ provider: 'file', path: bad })
      .write({ y: null })
      .catch((e: unknown) => e);
    assert.ok(err instanceof Error);
    assert.match(err.message, /bad\.json is not a JSON object file/);
    assert.ok(!JSON.stringify(err, Object.getOwnPropertyNames(err)).includes('leaked-secret'));
  });

  it('pending passwords: generated, then only the mark of who stored it', async () => {
    const pending = new PendingPasswords(join(dir, 'state', 'pending.json'));
    assert.equal(await pending.get('switch/a'), undefined);
    await pending.generated('switch/a', 'job-1/1', 'n3w-secret');
    assert.deepEqual(
      { ...(await pending.get('switch/a')), at: 'x' },
      { state: 'generated', password: 'n3w-secret', owner: 'job-1/1', at: 'x' },
    );
    assert.equal(statSync(join(dir, 'state', 'pending.json')).mode & 0o777, 0o600);
    await pending.stored('switch/a', 'job-1/1');
    assert.deepEqual({ ...(await pending.get('switch/a')), at: 'x' }, { state: 'stored', owner: 'job-1/1', at: 'x' });
    assert.ok(!readFileSync(join(dir, 'state', 'pending.json'), 'utf8').includes('n3w-secret'));
  });
});

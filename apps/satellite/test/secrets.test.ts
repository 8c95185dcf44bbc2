import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSecretStore, UnknownCredentialError } from '../src/secrets/index.js';

describe('site secret stores', () => {
  it('file store resolves references and picks up a rotated file without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-secrets-'));
    const path = join(dir, 'secrets.json');
    writeFileSync(path, JSON.stringify({ 'bmc/default': { username: 'admin', password: 'one' } }));
    const store = createSecretStore({ provider: 'file', path }, {});
    assert.deepEqual(await store.resolve('bmc/default'), { username: 'admin', password: 'one' });
    writeFileSync(path, JSON.stringify({ 'bmc/default': { username: 'admin', password: 'two' } }));
    utimesSync(path, new Date(), new Date(Date.now() + 5_000));
    assert.equal((await store.resolve('bmc/default')).password, 'two');
    await assert.rejects(store.resolve('bmc/other'), UnknownCredentialError);
  });

  it('a malformed secret file is reported by path, never echoing a value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-secrets-'));
    const path = join(dir, 'secrets.json');
    writeFileSync(path, JSON.stringify({ 'bmc/default': { username: 'admin', password: 'hunter2', extra: 'x' } }));
    const store = createSecretStore({ provider: 'file', path }, {});
    await assert.rejects(
      store.resolve('bmc/default'),
      (err: Error) => /malformed/.test(err.message) && !err.message.includes('hunter2'),
    );
  });

  it('env store reads PREFIX_REF as user:password', async () => {
    const store = createSecretStore(
      { provider: 'env', prefix: 'FLEET_SECRET' },
      { FLEET_SECRET_BMC_DEFAULT: 'root:pa:ss' },
    );
    assert.deepEqual(await store.resolve('bmc/default'), { username: 'root', password: 'pa:ss' });
    await assert.rejects(store.resolve('bmc/none'), UnknownCredentialError);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import type { RedfishError } from '../src/index.js';
import { findAccount, readPasswordPolicy, RedfishClient, setAccountPassword } from '../src/index.js';
import { freePort } from './helpers/servers.js';

describe('AccountService calls against the BMC simulator', () => {
  let sim: RedfishSimulator;
  const id = 'bmc-accounts-1';
  const clientWith = (password: string) =>
    new RedfishClient({
      baseUrl: sim.bmcUrl(id),
      device: 'dev-1',
      credentials: { username: 'admin', password },
      auth: 'session',
      retryBaseDelayMs: 5,
    });
  before(async () => {
    sim = await startRedfishSimulator({
      bmcs: [{ id, address: '127.0.0.1', port: await freePort(), username: 'admin', password: 'old-pass-1' }],
      timeScale: 0.001,
    });
  });
  after(() => sim.close());

  it('finds the account by UserName, reads the policy and sets the password under If-Match', async () => {
    const client = clientWith('old-pass-1');
    try {
      assert.equal((await findAccount(client, 'admin')).uri, '/redfish/v1/AccountService/Accounts/1');
      assert.deepEqual(await readPasswordPolicy(client), { minLength: 8, maxLength: 20 });
      await setAccountPassword(client, 'admin', 'New-pass-2');
      const patch = sim.bmc(id).log.find((r) => r.method === 'PATCH')!;
      assert.equal(patch.status, 200);
    } finally {
      await client.close();
    }
    const fresh = clientWith('New-pass-2');
    try {
      await findAccount(fresh, 'admin');
    } finally {
      await fresh.close();
    }
    const stale = clientWith('old-pass-1');
    await assert.rejects(findAccount(stale, 'admin'), (err: RedfishError) => err.code === 'Unauthenticated');
    await stale.close();
  });

  it('names the URI and cause of a refusal without the password, and NotFound for an unknown user', async () => {
    const client = clientWith('New-pass-2');
    try {
      const tooLong = 'x'.repeat(24);
      await assert.rejects(setAccountPassword(client, 'admin', tooLong), (err: RedfishError) => {
        assert.equal(err.code, 'InvalidArgument');
        assert.equal(err.uri, '/redfish/v1/AccountService/Accounts/1');
        assert.match(err.message, /password change refused/);
        assert.ok(!err.message.includes(tooLong), err.message);
        return true;
      });
      await assert.rejects(findAccount(client, 'nobody'), (err: RedfishError) => {
        assert.equal(err.code, 'NotFound');
        assert.match(err.message, /no account with UserName nobody/);
        return true;
      });
    } finally {
      await client.close();
    }
  });
});

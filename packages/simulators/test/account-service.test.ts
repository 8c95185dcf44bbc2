import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { admin, PASSWORD, rf, startSim, USER, type TestSim } from './helpers.js';

const ACCOUNT = '/redfish/v1/AccountService/Accounts/1';
const SESSIONS = '/redfish/v1/SessionService/Sessions';
const basicOf = (password: string) => `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`;
const login = (base: string, password: string) =>
  rf(base, 'POST', SESSIONS, { auth: null, body: { UserName: USER, Password: password } });

describe('AccountService', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([
      { id: 'tray' },
      { id: 'shelf', profile: 'powershelf-liteon' },
      { id: 'switch', profile: 'nvswitch-tray' },
      { id: 'faulty' },
    ]);
  });
  after(() => t.close());

  it("is linked from every profile's service root: the account by UserName, Password write-only", async () => {
    for (const id of ['tray', 'shelf', 'switch']) {
      const root = await rf(t.url(id), 'GET', '/redfish/v1', { auth: null });
      assert.equal(root.body.AccountService['@odata.id'], '/redfish/v1/AccountService');
      const service = await rf(t.url(id), 'GET', '/redfish/v1/AccountService');
      assert.equal(service.body.MaxPasswordLength, 20);
      const accounts = await rf(t.url(id), 'GET', service.body.Accounts['@odata.id']);
      assert.deepEqual(accounts.body.Members, [{ '@odata.id': ACCOUNT }]);
      const account = await rf(t.url(id), 'GET', ACCOUNT);
      assert.equal(account.body.UserName, USER);
      assert.equal(account.body.RoleId, 'Administrator');
      assert.equal(account.body.Enabled, true);
      assert.equal(account.body.Locked, false);
      assert.equal(account.body.Password, null);
      assert.ok(account.headers.get('etag'));
      // The account's role is one of the predefined roles the service lists (what account tools select from).
      const roles = await rf(t.url(id), 'GET', service.body.Roles['@odata.id']);
      const ids = [];
      for (const m of roles.body.Members as { '@odata.id': string }[])
        ids.push((await rf(t.url(id), 'GET', m['@odata.id'])).body.Id as string);
      assert.deepEqual(ids, ['Administrator', 'Operator', 'ReadOnly']);
      const role = await rf(t.url(id), 'GET', account.body.Links.Role['@odata.id']);
      assert.equal(role.body.Id, account.body.RoleId);
      assert.ok((role.body.AssignedPrivileges as string[]).includes('ConfigureUsers'));
    }
  });

  it('a PATCHed Password moves Basic auth and logins, ends the other sessions, keeps the changing one', async () => {
    const base = t.url('tray');
    const other = (await login(base, PASSWORD)).headers.get('x-auth-token')!;
    const mine = (await login(base, PASSWORD)).headers.get('x-auth-token')!;
    const etag = (await rf(base, 'GET', ACCOUNT)).headers.get('etag')!;
    const next = 'N3w-pass.word_1';
    const patched = await rf(base, 'PATCH', ACCOUNT, {
      auth: null,
      headers: { 'x-auth-token': mine, 'if-match': etag },
      body: { Password: next },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.Password, null, 'the new password is never echoed');

    assert.equal((await rf(base, 'GET', '/redfish/v1/Systems', { auth: basicOf(PASSWORD) })).status, 401);
    assert.equal((await rf(base, 'GET', '/redfish/v1/Systems', { auth: basicOf(next) })).status, 200);
    assert.equal((await login(base, PASSWORD)).status, 401);
    assert.equal((await login(base, next)).status, 201);
    const get = (token: string) =>
      rf(base, 'GET', '/redfish/v1/Systems', { auth: null, headers: { 'x-auth-token': token } });
    assert.equal((await get(other)).status, 401, 'another session of the account ends');
    assert.equal((await get(mine)).status, 200, 'the session that changed it stays');

    const log = (await admin(t, 'GET', '/bmcs/tray/requests')).body.items as { method: string; body?: unknown }[];
    assert.ok(!JSON.stringify(log).includes(next), 'the request log never holds the password');
    assert.ok(log.some((r) => r.method === 'PATCH'));
  });

  it('refuses a stale If-Match, a password outside the advertised lengths and other properties', async () => {
    const base = t.url('shelf');
    const stale = await rf(base, 'PATCH', ACCOUNT, {
      headers: { 'if-match': 'W/"stale"' },
      body: { Password: 'Abcdefgh1!' },
    });
    assert.equal(stale.status, 412);
    assert.equal((await rf(base, 'PATCH', ACCOUNT, { body: { Password: 'short' } })).status, 400);
    assert.equal((await rf(base, 'PATCH', ACCOUNT, { body: { Password: 'x'.repeat(21) } })).status, 400);
    assert.equal((await rf(base, 'PATCH', ACCOUNT, { body: { UserName: 'root' } })).status, 400);
    assert.equal((await rf(base, 'GET', '/redfish/v1/Systems')).status, 404, 'the shelf still takes the old password');
  });

  it('with refuseNewPassword, acknowledges the PATCH but keeps the old password', async () => {
    const base = t.url('faulty');
    assert.equal((await admin(t, 'PUT', '/bmcs/faulty/faults', { refuseNewPassword: true })).status, 200);
    assert.equal((await rf(base, 'PATCH', ACCOUNT, { body: { Password: 'Never-taken-1' } })).status, 200);
    assert.equal((await login(base, 'Never-taken-1')).status, 401);
    assert.equal((await login(base, PASSWORD)).status, 201);
    await admin(t, 'DELETE', '/bmcs/faulty/faults');
    assert.equal((await rf(base, 'PATCH', ACCOUNT, { body: { Password: 'Now-taken-12' } })).status, 200);
    assert.equal((await login(base, 'Now-taken-12')).status, 201);
  });
});

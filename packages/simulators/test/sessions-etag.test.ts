import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PASSWORD, rf, startSim, USER, type TestSim } from './helpers.js';

const SESSIONS = '/redfish/v1/SessionService/Sessions';

describe('sessions', () => {
  let t: TestSim;
  let base: string;
  before(async () => {
    t = await startSim([{ id: 'tray', sessionLimit: 3 }]);
    base = t.url('tray');
  });
  after(() => t.close());

  it('logs in with X-Auth-Token and Location, serves the token, logs out with DELETE', async () => {
    const login = await rf(base, 'POST', SESSIONS, { auth: null, body: { UserName: USER, Password: PASSWORD } });
    assert.equal(login.status, 201);
    const token = login.headers.get('x-auth-token')!;
    const location = login.headers.get('location')!;
    assert.ok(token.length >= 16);
    assert.match(location, /^\/redfish\/v1\/SessionService\/Sessions\/\w+$/);
    assert.equal(login.body['@odata.id'], location);
    assert.equal(login.body.Password, undefined, 'the password is never echoed');

    const headers = { 'x-auth-token': token };
    assert.equal((await rf(base, 'GET', '/redfish/v1/Systems/System_0', { auth: null, headers })).status, 200);
    const members = await rf(base, 'GET', SESSIONS, { auth: null, headers });
    assert.deepEqual(members.body.Members, [{ '@odata.id': location }]);

    assert.equal((await rf(base, 'DELETE', location, { auth: null, headers })).status, 204);
    assert.equal((await rf(base, 'GET', '/redfish/v1/Systems', { auth: null, headers })).status, 401);
  });

  it('refuses wrong credentials', async () => {
    const res = await rf(base, 'POST', SESSIONS, { auth: null, body: { UserName: USER, Password: 'nope' } });
    assert.equal(res.status, 401);
    assert.equal(
      (
        await rf(base, 'GET', '/redfish/v1/Systems', {
          auth: `Basic ${Buffer.from(`${USER}:nope`).toString('base64')}`,
        })
      ).status,
      401,
    );
  });

  it('enforces the per-BMC session limit with Base SessionLimitExceeded', async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await rf(base, 'POST', SESSIONS, { auth: null, body: { UserName: USER, Password: PASSWORD } });
      assert.equal(res.status, 201);
      made.push(res.headers.get('location')!);
    }
    const over = await rf(base, 'POST', SESSIONS, { auth: null, body: { UserName: USER, Password: PASSWORD } });
    assert.equal(over.status, 503);
    assert.match(over.body.error.code, /^Base\.1\.\d+\.SessionLimitExceeded$/);
    // Basic auth needs no session, so it still works when sessions are exhausted.
    assert.equal((await rf(base, 'GET', '/redfish/v1/Systems')).status, 200);
    await rf(base, 'DELETE', made[0]!);
    assert.equal(
      (await rf(base, 'POST', SESSIONS, { auth: null, body: { UserName: USER, Password: PASSWORD } })).status,
      201,
    );
  });

  it('rejects a login body without UserName', async () => {
    const res = await rf(base, 'POST', SESSIONS, { auth: null, body: { Password: PASSWORD } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.code, /PropertyMissing$/);
  });
});

describe('ETag and If-Match', () => {
  let t: TestSim;
  let base: string;
  before(async () => {
    t = await startSim([{ id: 'tray' }]);
    base = t.url('tray');
  });
  after(() => t.close());

  const SYSTEM = '/redfish/v1/Systems/System_0';

  it('serves an ETag and 304 for a matching If-None-Match', async () => {
    const first = await rf(base, 'GET', SYSTEM);
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^W\/"[0-9a-f]+"$/);
    assert.equal((await rf(base, 'GET', SYSTEM, { headers: { 'if-none-match': etag } })).status, 304);
  });

  it('PATCH with a stale If-Match gets 412, with the current one 200 and a new ETag', async () => {
    const etag = (await rf(base, 'GET', SYSTEM)).headers.get('etag')!;
    const stale = await rf(base, 'PATCH', SYSTEM, {
      headers: { 'if-match': 'W/"0000000000000000"' },
      body: { AssetTag: 'rack7-u12' },
    });
    assert.equal(stale.status, 412);
    assert.match(stale.body.error.code, /^Base\.1\.\d+\.PreconditionFailed$/);

    const ok = await rf(base, 'PATCH', SYSTEM, { headers: { 'if-match': etag }, body: { AssetTag: 'rack7-u12' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.AssetTag, 'rack7-u12');
    assert.notEqual(ok.headers.get('etag'), etag);
    assert.equal((await rf(base, 'GET', SYSTEM)).body.AssetTag, 'rack7-u12');

    // The old tag now names an outdated version of the resource.
    assert.equal(
      (await rf(base, 'PATCH', SYSTEM, { headers: { 'if-match': etag }, body: { AssetTag: 'x' } })).status,
      412,
    );
  });

  it('a power transition changes the ETag', async () => {
    const before = (await rf(base, 'GET', SYSTEM)).headers.get('etag');
    await rf(base, 'POST', `${SYSTEM}/Actions/ComputerSystem.Reset`, { body: { ResetType: 'ForceOn' } });
    assert.notEqual((await rf(base, 'GET', SYSTEM)).headers.get('etag'), before);
  });

  it('refuses read-only and unknown properties with Base messages', async () => {
    const res = await rf(base, 'PATCH', SYSTEM, { body: { PowerState: 'Off', Colour: 'red' } });
    assert.equal(res.status, 400);
    const ids = res.body.error['@Message.ExtendedInfo'].map((m: { MessageId: string }) => m.MessageId.split('.').pop());
    assert.deepEqual(ids, ['PropertyNotWritable', 'PropertyUnknown']);
  });

  it('answers 405 with Allow for a method the resource does not support', async () => {
    const res = await rf(base, 'DELETE', '/redfish/v1/Chassis/BMC_0');
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, HEAD, PATCH');
  });
});

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { getPowerState, RedfishClient, RedfishError, resetSystem } from '../src/index.js';
import { fakeBmc, type FakeBmc } from './helpers/fake-bmc.js';
import { credentials } from './helpers/servers.js';

const sessionsPath = '/redfish/v1/SessionService/Sessions';

describe('SessionService sessions', () => {
  let bmc: FakeBmc;
  const session = (o: { password?: string } = {}) =>
    new RedfishClient({
      baseUrl: bmc.url,
      credentials: { ...credentials, ...(o.password ? { password: o.password } : {}) },
      auth: 'session',
      retryBaseDelayMs: 5,
      maxAttempts: 2,
    });
  const logins = () => bmc.requests.filter((r) => r.method === 'POST' && r.path === sessionsPath).length;

  before(async () => {
    bmc = await fakeBmc(credentials);
  });
  beforeEach(() => {
    bmc.requests.length = 0;
    bmc.state.sessions.clear();
    bmc.state.peakSessions = 0;
    bmc.state.maxSessions = 2;
  });
  after(() => bmc.close());

  it('logs in once, reuses the token for every call, and logs out on close', async () => {
    const c = session();
    await Promise.all([getPowerState(c), getPowerState(c), resetSystem(c, 'On'), getPowerState(c)]);
    assert.equal(logins(), 1);
    assert.equal(bmc.state.sessions.size, 1);
    const authed = bmc.requests.filter((r) => r.path !== sessionsPath && r.path !== '/redfish/v1');
    assert.ok(authed.length >= 4);
    for (const r of authed) {
      assert.ok(r.headers['x-auth-token'], `${r.method} ${r.path} carries the session token`);
      assert.equal(r.headers.authorization, undefined, 'no Basic credentials next to the session');
    }
    // The login URI came from the service root, read without credentials.
    const root = bmc.requests.find((r) => r.path === '/redfish/v1');
    assert.equal(root?.headers.authorization, undefined);
    await c.close();
    assert.equal(bmc.state.sessions.size, 0);
    assert.ok(bmc.requests.some((r) => r.method === 'DELETE' && r.path.startsWith(`${sessionsPath}/`)));
  });

  it('re-creates the session after a 401 (BMC dropped it) and resends the request', async () => {
    const c = session();
    await getPowerState(c);
    bmc.state.sessions.clear(); // session timed out on the BMC
    await resetSystem(c, 'On');
    assert.equal(logins(), 2);
    assert.deepEqual(bmc.state.resets.at(-1)?.body, { ResetType: 'On' });
    assert.equal(bmc.state.peakSessions, 1);
    await c.close();
    assert.equal(bmc.state.sessions.size, 0);
  });

  it('wrong password: Unauthenticated after one login attempt, no session left', async () => {
    const c = session({ password: 'wrong' });
    const err = await getPowerState(c).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'Unauthenticated', String(err));
    assert.equal(logins(), 1);
    await c.close();
    assert.equal(bmc.state.sessions.size, 0);
  });

  it('never holds more than one session per client, and never leaks past the BMC limit', async () => {
    bmc.state.maxSessions = 2;
    // Many clients come and go, each with bursts of concurrent calls.
    for (let round = 0; round < 5; round++) {
      const clients = [session(), session()];
      await Promise.all(clients.flatMap((c) => [getPowerState(c), getPowerState(c), getPowerState(c)]));
      await Promise.all(clients.map((c) => c.close()));
    }
    assert.equal(bmc.state.peakSessions, 2);
    assert.equal(logins(), 10);
    assert.equal(bmc.state.sessions.size, 0);
  });

  it('BMC session table full: Unavailable (retryable), and the client still closes cleanly', async () => {
    bmc.state.maxSessions = 1;
    const holder = session();
    await getPowerState(holder);
    const late = session();
    const err = await getPowerState(late).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'Unavailable' && err.retryable, String(err));
    await late.close();
    await holder.close();
    assert.equal(bmc.state.sessions.size, 0);
    // Once the slot is free the late client's successor gets in.
    const next = session();
    assert.equal(await getPowerState(next), bmc.state.powerState);
    await next.close();
  });
});

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { getPowerState, RedfishClient, RedfishError, resetSystem, type RedfishClientOptions } from '../src/index.js';
import { fakeBmc, type FakeBmc } from './helpers/fake-bmc.js';
import { credentials, json } from './helpers/servers.js';

const systemPath = '/redfish/v1/Systems/System_0';
const resetPath = `${systemPath}/Actions/ComputerSystem.Reset`;

describe('faults: retries, timeouts and what is never resent', () => {
  let bmc: FakeBmc;
  const clients: RedfishClient[] = [];
  const client = (o: Partial<RedfishClientOptions> = {}) => {
    const c = new RedfishClient({ baseUrl: bmc.url, credentials, retryBaseDelayMs: 5, requestTimeoutMs: 2_000, ...o });
    clients.push(c);
    return c;
  };
  const count = (method: string, path: string) =>
    bmc.requests.filter((r) => r.method === method && r.path === path).length;

  before(async () => {
    bmc = await fakeBmc(credentials);
  });
  beforeEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    bmc.requests.length = 0;
    bmc.state.resets.length = 0;
    bmc.state.systemId = 'System_0';
    bmc.state.powerState = 'Off';
    delete bmc.state.intercept;
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await bmc.close();
  });

  /** Answers the first `n` matching requests with `fault`, then lets the fake serve normally. */
  const failFirst = (
    n: number,
    method: string,
    path: string,
    fault: (res: ServerResponse, req: IncomingMessage) => void,
  ) => {
    let left = n;
    bmc.state.intercept = (req, res, p) => {
      if (req.method !== method || p !== path || left <= 0) return false;
      left--;
      fault(res, req);
      return true;
    };
  };

  it('503 with Retry-After: waits as told, then succeeds', async () => {
    failFirst(1, 'GET', systemPath, (res) => json(res, 503, { error: { message: 'busy' } }, { 'retry-after': '1' }));
    const t0 = Date.now();
    assert.equal(await getPowerState(client()), 'Off');
    assert.ok(Date.now() - t0 >= 950, `retried after ${Date.now() - t0} ms, before Retry-After`);
    assert.equal(count('GET', systemPath), 2);
  });

  it('503 on a POST action is resent: the BMC refused it without acting', async () => {
    failFirst(1, 'POST', resetPath, (res) => json(res, 503, {}, { 'retry-after': '0' }));
    await resetSystem(client(), 'On');
    assert.equal(count('POST', resetPath), 2);
    assert.equal(bmc.state.resets.length, 1);
  });

  it('503 that persists ends as Unavailable after maxAttempts, naming BMC, URI and status', async () => {
    failFirst(100, 'GET', systemPath, (res) =>
      json(res, 503, { error: { message: 'service restarting' } }, { 'retry-after': '0' }),
    );
    const err = await getPowerState(client({ maxAttempts: 3 })).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError);
    assert.equal(err.code, 'Unavailable');
    assert.equal(err.status, 503);
    assert.equal(err.bmc, bmc.url);
    assert.equal(err.uri, systemPath);
    assert.equal(err.retryable, true);
    assert.match(err.message, /service restarting/);
    // A fresh client: nothing cached, so no re-discovery round on top of the 3 attempts.
    assert.equal(count('GET', systemPath), 3);
  });

  it('connection reset on a GET: resent, succeeds', async () => {
    failFirst(1, 'GET', systemPath, (_res, req) => req.socket.destroy());
    assert.equal(await getPowerState(client()), 'Off');
    assert.equal(count('GET', systemPath), 2);
  });

  it('connection reset on a POST action: not resent, reported as possibly applied', async () => {
    failFirst(1, 'POST', resetPath, (_res, req) => req.socket.destroy());
    const err = await resetSystem(client(), 'On').catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError);
    assert.equal(err.code, 'Unavailable');
    assert.equal(err.uri, resetPath);
    assert.match(err.message, /not resent/);
    assert.equal(count('POST', resetPath), 1);
  });

  it('hang: each attempt times out at requestTimeoutMs; GETs are retried, a POST is not', async () => {
    bmc.state.intercept = (req, _res, p) => p === systemPath || p === resetPath; // never answers
    const c = client({ requestTimeoutMs: 150, maxAttempts: 2 });
    const t0 = Date.now();
    const err = await getPowerState(c).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'Timeout', String(err));
    assert.ok(Date.now() - t0 < 2_000);
    assert.equal(count('GET', systemPath), 2);

    bmc.state.intercept = (req, _res, p) => p === resetPath;
    const post = await resetSystem(c, 'On').catch((e: unknown) => e);
    assert.ok(post instanceof RedfishError && post.code === 'Timeout', String(post));
    assert.equal(count('POST', resetPath), 1);
  });

  it('other 4xx: no retry, typed code', async () => {
    failFirst(1, 'POST', resetPath, (res) =>
      json(res, 400, { error: { '@Message.ExtendedInfo': [{ Message: 'ResetType not supported now' }] } }),
    );
    const err = await resetSystem(client(), 'On').catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError);
    assert.equal(err.code, 'InvalidArgument');
    assert.equal(err.retryable, false);
    assert.match(err.causeText, /not supported now/);
    assert.equal(count('POST', resetPath), 1);
  });

  it('wrong Basic credentials: Unauthenticated, asked once', async () => {
    const c = new RedfishClient({ baseUrl: bmc.url, credentials: { username: 'admin', password: 'nope' } });
    clients.push(c);
    const err = await getPowerState(c).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'Unauthenticated' && err.status === 401);
    assert.equal(count('GET', '/redfish/v1/Systems'), 1);
  });

  it('stale cached link (404): re-discovers from the service root and finds the moved system', async () => {
    const c = client();
    assert.equal(await getPowerState(c), 'Off');
    bmc.state.systemId = 'System_7';
    bmc.state.powerState = 'On';
    assert.equal(await getPowerState(c), 'On');
    bmc.state.powerState = 'Off';
    assert.equal(count('GET', systemPath), 2, 'the cached link was used, failed once, and was dropped');
    assert.equal(count('GET', '/redfish/v1'), 2, 'the service root was read again');
    // The device names no system, so the BMC's only one (now System_7) is taken, read once.
    assert.equal(count('GET', '/redfish/v1/Systems/System_7'), 1);
  });

  it('a 404 with nothing cached is not retried', async () => {
    bmc.state.intercept = (req, res, p) => (p === '/redfish/v1/Systems' ? (json(res, 404, {}), true) : false);
    const err = await getPowerState(client()).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'NotFound');
    assert.equal(count('GET', '/redfish/v1/Systems'), 1);
  });

  it('connection refused: Unavailable and retryable', async () => {
    const c = new RedfishClient({ baseUrl: 'http://127.0.0.1:9', credentials, retryBaseDelayMs: 1, maxAttempts: 2 });
    clients.push(c);
    const err = await getPowerState(c).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError, String(err));
    assert.equal(err.code, 'Unavailable');
    assert.match(err.causeText, /ECONNREFUSED/);
    assert.equal(err.retryable, true);
  });

  it('an aborted signal cancels a wait and surfaces the caller’s reason', async () => {
    failFirst(1, 'GET', systemPath, (res) => json(res, 503, {}, { 'retry-after': '30' }));
    const ac = new AbortController();
    const c = client({ signal: ac.signal });
    setTimeout(() => ac.abort(new Error('operator cancelled')), 100);
    await assert.rejects(getPowerState(c), /operator cancelled/);
  });
});

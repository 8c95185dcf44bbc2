import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

describe('rate limit per token', () => {
  let hub: TestHub;
  before(async () => {
    hub = await startTestHub({ rateLimit: { perSecond: 2, burst: 5 } });
  });
  after(() => hub.close());

  const get = (token: string | undefined, url = '/v1/sites') =>
    hub.app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('answers a burst, then 429 with Retry-After and the error shape; other tokens are not affected', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await get(hub.tokens.viewer)).statusCode);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    const refused = await get(hub.tokens.viewer);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '1');
    const body = refused.json() as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'RESOURCE_EXHAUSTED');
    assert.match(body.error.message, /at most 2 requests a second \(bursts of 5\) per token/);
    assert.equal((await get(hub.tokens.operator)).statusCode, 200, 'another token has its own bucket');
    // Public routes are not limited.
    for (let i = 0; i < 10; i++) assert.equal((await get(undefined, '/healthz')).statusCode, 200);
  });

  it('refills at the sustained rate', async () => {
    while ((await get(hub.tokens.admin)).statusCode === 200);
    await new Promise((r) => setTimeout(r, 600));
    assert.equal((await get(hub.tokens.admin)).statusCode, 200, 'one request back after half a second');
    assert.equal((await get(hub.tokens.admin)).statusCode, 429);
  });

  it('throttles guessed tokens before they cost a lookup, by the header presented', async () => {
    const guess = 'not-a-token';
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await get(guess)).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
  });
});

describe('body size per route', () => {
  let hub: TestHub;
  before(async () => {
    hub = await startTestHub();
  });
  after(() => hub.close());
  const post = (url: string, body: unknown) =>
    hub.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${hub.tokens.admin}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });

  it('refuses a mutation body over 64 KiB with a 413 naming the body, before the handler', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const res = await post(`/v1/devices/${id}/quarantine`, { reason: 'x'.repeat(70 * 1024) });
    assert.equal(res.statusCode, 413);
    const body = res.json() as { error: { code: string; details: { field: string }[] } };
    assert.equal(body.error.code, 'INVALID_ARGUMENT');
    assert.equal(body.error.details[0]!.field, 'body');
    // Just under the limit the handler runs (and finds no such device).
    assert.equal((await post(`/v1/devices/${id}/quarantine`, { reason: 'x'.repeat(1000) })).statusCode, 404);
  });

  it('takes a list of thousands of ids where the route is made for it', async () => {
    const ids = Array.from({ length: 5000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const res = await post('/v1/firmware-campaigns', { name: 'big', manifest_id: ids[0], device_ids: ids });
    assert.ok(JSON.stringify({ device_ids: ids }).length > 64 * 1024);
    assert.notEqual(res.statusCode, 413, res.body);
    assert.ok(res.statusCode < 500, res.body);
  });
});

describe('security headers', () => {
  let hub: TestHub;
  before(async () => {
    hub = await startTestHub();
  });
  after(() => hub.close());

  it('every answer forbids framing, sniffing and foreign scripts; no HSTS on plain HTTP', async () => {
    for (const url of ['/healthz', '/v1/sites', '/no-such-path']) {
      const res = await hub.app.inject({ method: 'GET', url });
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/, url);
      assert.match(csp, /script-src 'self';/, url);
      assert.match(csp, /frame-ancestors 'none'/, url);
      assert.match(csp, /connect-src 'self';/, url);
      assert.doesNotMatch(csp, /upgrade-insecure-requests/, url);
      assert.equal(res.headers['x-frame-options'], 'DENY', url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
      assert.equal(res.headers['referrer-policy'], 'no-referrer', url);
      assert.equal(res.headers['strict-transport-security'], undefined, url);
    }
  });

  it('without an OIDC web client, the console signs in with API tokens only (asked without a token)', async () => {
    const res = await hub.app.inject({ method: 'GET', url: '/v1/auth/config' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { oidc: null });
  });
});

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import type Provider from 'oidc-provider';
import { pino } from 'pino';
import { insertSite } from '@fleet/db';
import { ApiError } from '../src/errors.js';
import { createOidcVerifier, roleOfGroups } from '../src/plugins/oidc.js';
import { OidcConfig } from '../src/config.js';
import { clientCredentialsToken, openIdProvider, signingKey, type SigningKey } from './helpers/oidc-provider.js';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// OIDC sign-in beside API tokens (docs/security.md "OIDC sign-in"), against a real OpenID provider in this process:
// each client stands for a person (client credentials: `sub` is the client id), its groups put in the access token.
const audience = 'https://hub.fleet.test';
const people: Record<string, string[]> = {
  alice: ['fleet-viewers'],
  bob: ['dc-a-ops', 'fleet-viewers'],
  carol: ['fleet-admins', 'dc-a-ops'],
  dave: ['marketing'],
};
const roleMapping: OidcConfig['roleMapping'] = {
  'fleet-admins': { role: 'admin' },
  'fleet-viewers': { role: 'viewer' },
  'dc-a-ops': { role: 'operator', sites: ['dc-a'] },
};

describe('OIDC sign-in', () => {
  let hub: TestHub;
  let app: FastifyInstance;
  let server: Server;
  let issuer = '';
  let provider: Provider;
  let key1: SigningKey;

  const call = (method: 'GET' | 'POST', url: string, token: string, body?: object) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(body ? { payload: body } : {}) });
  const refused = (res: { statusCode: number; body: string }, status: number, message: RegExp) => {
    assert.equal(res.statusCode, status, res.body);
    assert.match(JSON.parse(res.body).error.message, message);
  };
  const accessToken = (person: string, resource = audience) => clientCredentialsToken(issuer, person, resource);
  const header = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString());
  /** A token as the provider would make it, signed by `key`, with the claims changed. */
  const forge = (key: SigningKey, claims: Record<string, unknown>, exp: number) =>
    new SignJWT({ iss: issuer, aud: audience, sub: 'mallory', groups: ['fleet-admins'], ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt' })
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(key.privateKey);

  before(async () => {
    // The provider answers behind a server of its own, so it can be replaced (a restart with new keys) on one address.
    server = createServer((req, res) => provider.callback()(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    key1 = await signingKey('key-1');
    provider = openIdProvider(issuer, [key1], people, audience);
    hub = await startTestHub({
      oidc: {
        issuer,
        audience,
        groupsClaim: 'groups',
        nameClaim: 'preferred_username',
        roleMapping,
        clockToleranceS: 5,
        // Every unknown key id fetches the key set again, so the rotation below needs no wait.
        jwksCooldownS: 0,
        webClientId: 'fleet-console',
        webScopes: ['openid', 'profile'],
        webResourceIndicator: true,
      },
    });
    app = hub.app;
    for (const id of ['dc-a', 'dc-b']) await insertSite(hub.handle.db, { id, name: id });
  });
  after(async () => {
    await hub?.close();
    server?.close();
  });

  it("accepts the provider's token as its groups' role: a viewer reads, and is refused a change", async () => {
    const jwt = await accessToken('alice');
    assert.equal(header(jwt).typ, 'at+jwt');
    const me = await call('GET', '/v1/whoami', jwt);
    assert.equal(me.statusCode, 200, me.body);
    assert.deepEqual(me.json(), { name: 'alice', role: 'viewer', sites: null });
    const sites = await call('GET', '/v1/sites', jwt);
    assert.equal(sites.statusCode, 200, sites.body);
    assert.deepEqual(
      sites.json().items.map((s: { id: string }) => s.id),
      ['dc-a', 'dc-b'],
    );
    refused(await call('POST', '/v1/sites', jwt, { id: 'dc-x', name: 'X' }), 403, /admin role; user alice has viewer/);
  });

  it('keeps a person of a site-scoped group to its site (the highest role, over the groups of that role)', async () => {
    const jwt = await accessToken('bob');
    const me = await call('GET', '/v1/whoami', jwt);
    assert.deepEqual(me.json(), { name: 'bob', role: 'operator', sites: ['dc-a'] });
    const sites = await call('GET', '/v1/sites', jwt);
    assert.deepEqual(
      sites.json().items.map((s: { id: string }) => s.id),
      ['dc-a'],
    );
    assert.equal((await call('GET', '/v1/sites/dc-a', jwt)).statusCode, 200);
    refused(await call('GET', '/v1/sites/dc-b', jwt), 403, /bob may act only on site dc-a/);
  });

  it('audits the person: an admin group creates a site under its own name', async () => {
    const jwt = await accessToken('carol');
    assert.deepEqual((await call('GET', '/v1/whoami', jwt)).json(), { name: 'carol', role: 'admin', sites: null });
    const created = await call('POST', '/v1/sites', jwt, { id: 'dc-c', name: 'C' });
    assert.equal(created.statusCode, 201, created.body);
    const audit = await call('GET', '/v1/audit?actor=carol', jwt);
    const row = audit.json().items.find((r: { target: string }) => r.target.includes('dc-c'));
    assert.ok(row, audit.body);
    assert.equal(row.actor, 'carol');
    assert.equal(row.role, 'admin');
    assert.equal(row.outcome, 'accepted');
  });

  it('refuses a person in no mapped group, naming the groups', async () => {
    refused(await call('GET', '/v1/sites', await accessToken('dave')), 403, /dave is in no group .*marketing/);
  });

  it('refuses an expired token, one of another audience or issuer, one signed by a key the issuer lacks', async () => {
    const expired = await forge(key1, {}, Math.floor(Date.now() / 1000) - 60);
    refused(await call('GET', '/v1/sites', expired), 401, /has expired/);
    // Within the clock tolerance (5 s) an expired token still passes: the test of the test.
    const justExpired = await forge(key1, {}, Math.floor(Date.now() / 1000) - 1);
    assert.equal((await call('GET', '/v1/sites', justExpired)).statusCode, 200);

    const otherAudience = await accessToken('carol', 'https://other.fleet.test');
    refused(await call('GET', '/v1/sites', otherAudience), 401, /another audience/);

    const stranger = await signingKey('key-stranger');
    const unknownKey = await forge(stranger, {}, Math.floor(Date.now() / 1000) + 300);
    refused(await call('GET', '/v1/sites', unknownKey), 401, /key the issuer's key set does not hold/);
    // The same key id as the issuer's, another key: the signature does not verify.
    const impostor = await forge({ ...stranger, kid: key1.kid }, {}, Math.floor(Date.now() / 1000) + 300);
    const res = await call('GET', '/v1/sites', impostor);
    refused(res, 401, /signature that does not verify/);
    assert.ok(!res.body.includes(impostor), 'the token is never echoed');

    const otherIssuer = await forge(key1, { iss: 'https://evil.test' }, Math.floor(Date.now() / 1000) + 300);
    refused(await call('GET', '/v1/sites', otherIssuer), 401, /another issuer/);
  });

  it('picks up a rotated signing key without a restart', async () => {
    const before = await accessToken('alice');
    assert.equal((await call('GET', '/v1/whoami', before)).statusCode, 200);
    // The provider restarts with a new signing key, the old one kept for the tokens it signed.
    const key2 = await signingKey('key-2');
    provider = openIdProvider(issuer, [key2, key1], people, audience);
    const rotated = await accessToken('alice');
    assert.equal(header(rotated).kid, 'key-2');
    const me = await call('GET', '/v1/whoami', rotated);
    assert.equal(me.statusCode, 200, me.body);
    assert.equal((await call('GET', '/v1/whoami', before)).statusCode, 200);
  });

  it('keeps API tokens working beside OIDC', async () => {
    const me = await call('GET', '/v1/whoami', hub.tokens.operator);
    assert.deepEqual(me.json(), { name: 't-operator', role: 'operator', sites: null });
    refused(await call('GET', '/v1/sites', 'fleet_nosuchtoken'), 401, /unknown or revoked/);
  });

  it('answers 503 to a JWT while the issuer cannot be reached', async () => {
    const dead = createServer((_req, res) => res.writeHead(502).end());
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const verify = createOidcVerifier(
      OidcConfig.parse({ issuer: `http://127.0.0.1:${(dead.address() as AddressInfo).port}`, audience, roleMapping }),
      pino({ level: 'silent' }),
    );
    const jwt = await accessToken('alice');
    await assert.rejects(verify(jwt), (err: unknown) => err instanceof ApiError && err.code === 'UNAVAILABLE');
    dead.close();
    // The hub's own verifier found its issuer: API tokens and JWTs both still pass.
    assert.equal((await call('GET', '/v1/whoami', jwt)).statusCode, 200);
  });

  it('tells the console, without a token, how to sign in at the issuer; its CSP lets it call the issuer', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/auth/config' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      oidc: { issuer, client_id: 'fleet-console', scopes: ['openid', 'profile'], resource: audience },
    });
    assert.match(String(res.headers['content-security-policy']), new RegExp(`connect-src 'self' ${issuer};`));
  });

  it('lists every problem of an oidc config at once', () => {
    const parsed = OidcConfig.safeParse({
      issuer: 'not a url',
      audience: '',
      roleMapping: { bots: { role: 'satellite' }, ops: { role: 'operator', sites: [] } },
      clockToleranceS: -1,
      webClientId: '',
      webScopes: ['profile', 'two words'],
    });
    assert.ok(!parsed.success);
    const paths = parsed.error.issues.map((i) => i.path.join('.')).sort();
    assert.deepEqual(paths, [
      'audience',
      'clockToleranceS',
      'issuer',
      'roleMapping.bots.role',
      'roleMapping.ops.sites',
      'webClientId',
      'webScopes',
      'webScopes.1',
    ]);
    const empty = OidcConfig.safeParse({ issuer: 'https://id.example', audience: 'fleet', roleMapping: {} });
    assert.ok(!empty.success && /at least one group/.test(empty.error.issues[0]!.message));
  });

  it('maps groups to the highest role, over the sites of the groups granting it', () => {
    const mapping: OidcConfig['roleMapping'] = {
      viewers: { role: 'viewer' },
      'a-ops': { role: 'operator', sites: ['dc-a'] },
      'b-ops': { role: 'operator', sites: ['dc-b'] },
      ops: { role: 'operator' },
    };
    assert.deepEqual(roleOfGroups(mapping, ['viewers', 'a-ops']), { role: 'operator', sites: ['dc-a'] });
    assert.deepEqual(roleOfGroups(mapping, ['b-ops', 'a-ops']), { role: 'operator', sites: ['dc-a', 'dc-b'] });
    assert.deepEqual(roleOfGroups(mapping, ['a-ops', 'ops']), { role: 'operator', sites: null });
    assert.deepEqual(roleOfGroups(mapping, ['viewers']), { role: 'viewer', sites: null });
    assert.equal(roleOfGroups(mapping, ['toString', 'other']), undefined);
  });
});

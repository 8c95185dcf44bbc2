import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { insertSite } from '@fleet/db';
import { OidcConfig } from '../../hub/src/config.js';
import { openIdProvider, signingKey } from '../../hub/test/helpers/oidc-provider.js';
import { startTestHub, type TestHub } from '../../hub/test/helpers/test-hub.js';
import { assertAccessible, launch, rowTexts, until } from './browser.js';
import { distDir, ensureBuilt } from './console.js';

// A person signs in to the console at a real OpenID provider in this process (npm oidc-provider, its development
// login and consent pages): authorization code with PKCE from the browser, the access token a JWT for the hub's
// audience, the person's groups their role (docs/security.md "OIDC sign-in").
const audience = 'https://hub.fleet.test';
const clientId = 'fleet-console';
const people: Record<string, string[]> = {
  bob: ['dc-a-ops'],
  alice: ['fleet-viewers'],
  erin: ['fleet-viewers'],
};

describe('console sign-in through the OpenID provider (authorization code + PKCE) in Chromium', () => {
  let hub: TestHub;
  let hubUrl = '';
  let issuer = '';
  let issuerServer: Server;
  let provider: ReturnType<typeof openIdProvider> | undefined;
  let browser: Browser;

  before(
    async () => {
      ensureBuilt();
      // The issuer's address must be in the hub's config, the hub's in the provider's client: the provider answers
      // behind a server of its own, made once both are known.
      issuerServer = createServer((req, res) => (provider ? provider.callback()(req, res) : res.writeHead(503).end()));
      await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
      issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
      hub = await startTestHub({
        web: { root: distDir },
        maxPackageBytes: 1 << 20,
        oidc: OidcConfig.parse({
          issuer,
          audience,
          roleMapping: {
            'fleet-viewers': { role: 'viewer' },
            'dc-a-ops': { role: 'operator', sites: ['dc-a'] },
          },
          webClientId: clientId,
          webScopes: ['openid', 'api'],
        }),
      });
      hubUrl = await hub.app.listen({ port: 0, host: '127.0.0.1' });
      provider = openIdProvider(issuer, [await signingKey('key-1')], people, audience, {
        clientId,
        redirectUri: `${hubUrl}/auth/callback`,
        accessTokenTtlS: { erin: 4 },
      });
      for (const id of ['dc-a', 'dc-b']) await insertSite(hub.handle.db, { id, name: `Site ${id}` });
      browser = await launch();
    },
    { timeout: 120_000 },
  );
  after(async () => {
    await browser?.close();
    await hub?.close();
    issuerServer?.close();
  });

  /** Opens `path` in a fresh context (no session at the provider either) and signs `person` in there. */
  async function signInAtProvider(person: string, path = '/'): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${hubUrl}${path}`);
    await page.getByRole('button', { name: `Sign in with 127.0.0.1:${new URL(issuer).port}`, exact: true }).click();
    await page.waitForURL((url) => url.origin === issuer);
    await page.locator('input[name="login"]').fill(person);
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.origin === hubUrl && url.pathname === path);
    await page.getByText(`${person} (`).waitFor();
    return page;
  }

  const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());

  it('signs an operator of dc-a in at the provider and back to the page asked for, with dc-a only', async () => {
    const context = await browser.newContext();
    const first = await context.newPage();
    await first.goto(hubUrl);
    await first.getByRole('button', { name: /^Sign in with / }).waitFor();
    await assertAccessible(first, 'sign-in with the OIDC button');
    await context.close();

    const page = await signInAtProvider('bob', '/sites');
    await page.getByText('bob (operator)').waitFor();
    assert.ok(!page.url().includes('code='), 'the code leaves the address bar');
    const token = await page.evaluate(() => sessionStorage.getItem('fleet.token'));
    assert.ok(token, 'the access token is kept in session storage');
    const payload = claims(token);
    assert.equal(payload.iss, issuer);
    assert.equal(payload.aud, audience);
    assert.equal(payload.sub, 'bob');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('fleet.oidc.pending')), null);

    const sites = page.getByRole('table', { name: 'Sites', exact: true });
    await sites.locator('tbody tr').first().waitFor();
    const ids = (await rowTexts(sites)).map((cells) => cells.join(' '));
    assert.ok(ids.some((row) => row.includes('dc-a')) && !ids.some((row) => row.includes('dc-b')), ids.join(' | '));
    await page.goto(`${hubUrl}/campaigns`);
    await page.getByRole('heading', { name: 'New campaign' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: /^Sign in with / }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('fleet.token')), null);
    await page.context().close();
  });

  it('a viewer reads every site, sees no operator controls; the hub refuses its token an operator action', async () => {
    const page = await signInAtProvider('alice', '/sites');
    await page.getByText('alice (viewer)').waitFor();
    const sites = page.getByRole('table', { name: 'Sites', exact: true });
    await until(async () => (await sites.locator('tbody tr').count()) === 2, 'both sites listed', 10_000);
    await page.goto(`${hubUrl}/campaigns`);
    await page.getByRole('heading', { name: 'Campaigns', exact: true }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'New campaign' }).count(), 0);
    const refused = await page.evaluate(async (job) => {
      const res = await fetch(`/v1/jobs/${job}/cancel`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${sessionStorage.getItem('fleet.token')}`,
          'content-type': 'application/json',
        },
        body: '{}',
      });
      return { status: res.status, body: (await res.json()) as { error: { message: string } } };
    }, randomUUID());
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /needs the operator role; user alice has viewer/);
    await page.context().close();
  });

  it('sends the person back to sign-in when the access token expires', { timeout: 30_000 }, async () => {
    const page = await signInAtProvider('erin');
    const expiresAt = Number(await page.evaluate(() => sessionStorage.getItem('fleet.token.expires_at')));
    assert.ok(expiresAt > Date.now() && expiresAt <= Date.now() + 4_000, `expires at ${expiresAt}`);
    await page.getByRole('alert').filter({ hasText: 'Your sign-in has expired' }).waitFor({ timeout: 10_000 });
    assert.equal(await page.evaluate(() => sessionStorage.getItem('fleet.token')), null);
    await page.context().close();
  });

  it('refuses a callback whose state is not the one this tab sent, and one no sign-in started', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(hubUrl);
    await page.getByRole('button', { name: /^Sign in with / }).click();
    await page.waitForURL((url) => url.origin === issuer);
    // An attacker's own code and state, sent back to the console as if from the provider.
    await page.goto(`${hubUrl}/auth/callback?code=forged&state=forged&iss=${encodeURIComponent(issuer)}`);
    await page.getByRole('alert').filter({ hasText: 'unexpected "state" response parameter' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('fleet.token')), null);

    await page.goto(`${hubUrl}/auth/callback?code=forged&state=forged`);
    await page.getByRole('alert').filter({ hasText: 'no sign-in was started in this tab' }).waitFor();
    await page.getByRole('link', { name: 'Back to sign-in' }).click();
    await page.getByRole('button', { name: /^Sign in with / }).waitFor();
    await context.close();
  });
});

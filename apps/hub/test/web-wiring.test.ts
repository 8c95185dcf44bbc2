import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HubConfig } from '../src/config.js';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// The web console is served at `/` behind the API: its pages and assets load, and no API path is shadowed.
describe('the hub serves the web console at / without shadowing the API', () => {
  let hub: TestHub;
  let root = '';
  const page = '<!doctype html><title>Fleet console</title>';

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-web-'));
    await mkdir(join(root, 'assets'));
    await writeFile(join(root, 'index.html'), page);
    await writeFile(join(root, 'assets', 'app-1234.js'), 'console.log(1)');
    hub = await startTestHub({ web: { root } });
  });
  after(async () => {
    await hub.close();
    await rm(root, { recursive: true, force: true });
  });

  const get = (url: string, headers: Record<string, string> = {}) => hub.app.inject({ method: 'GET', url, headers });
  const html = { accept: 'text/html,application/xhtml+xml' };

  it('the config finds the repository build by default', () => {
    const config = HubConfig.parse({
      database: { url: 'postgres://x/y' },
      http: { port: 1, allowPlainHttp: true },
      metrics: { port: 0 },
    });
    assert.match(config.web.root, /apps\/web\/dist$/);
  });

  it('serves the console, its assets, and index.html for its own routes', async () => {
    for (const url of ['/', '/racks/abc', '/jobs']) {
      const res = await get(url, html);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, page, url);
    }
    const asset = await get('/assets/app-1234.js');
    assert.equal(asset.statusCode, 200);
    assert.match(String(asset.headers['content-type']), /javascript/);
  });

  it('keeps /v1/*, /openapi.json, /docs and /healthz', async () => {
    const sites = await get('/v1/sites', html);
    assert.equal(sites.statusCode, 401);
    assert.equal(sites.json().error.code, 'UNAUTHENTICATED');
    const unknown = await get('/v1/no-such-thing', { ...html, authorization: `Bearer ${hub.tokens.viewer}` });
    assert.equal(unknown.statusCode, 404);
    assert.ok(unknown.json().error);
    const whoami = await get('/v1/whoami', { authorization: `Bearer ${hub.tokens.viewer}` });
    assert.deepEqual(whoami.json(), { name: 't-viewer', role: 'viewer', sites: null });
    const openapi = await get('/openapi.json', html);
    assert.equal(openapi.json().openapi, '3.1.0');
    const docs = await get('/docs', html);
    assert.equal(docs.statusCode, 200);
    assert.doesNotMatch(docs.body, /Fleet console/);
    assert.deepEqual((await get('/healthz', html)).json(), { status: 'ok' });
  });
});

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ApiError, createFleetClient, createUncheckedClient, octetStream, unwrap } from '../src/index.js';

/** A stand-in hub: answers each path with a canned status and body and records what it was sent. */
describe('@fleet/client against a fake hub', () => {
  let server: Server;
  let baseUrl = '';
  const seen: { url: string; authorization?: string; contentType?: string; body: string }[] = [];
  const answers: Record<string, [number, unknown]> = {
    '/v1/jobs/job-1': [200, { id: 'job-1', state: 'succeeded' }],
    '/v1/jobs/missing': [404, { error: { code: 'NOT_FOUND', message: 'job missing not found' } }],
    '/v1/devices/dev-1/power': [
      400,
      {
        error: {
          code: 'INVALID_ARGUMENT',
          message: 'invalid request',
          details: [{ field: 'action', issue: 'must be one of on, off' }],
        },
      },
    ],
    '/v1/sites': [502, 'upstream unavailable'],
    '/v1/firmware/packages': [201, { id: 'pkg-1', digest: 'sha256:ab' }],
  };

  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const { authorization, 'content-type': contentType } = req.headers;
        seen.push({
          url: req.url ?? '',
          body,
          ...(authorization ? { authorization } : {}),
          ...(contentType ? { contentType } : {}),
        });
        const [status, answer] = answers[new URL(req.url ?? '/', 'http://x').pathname] ?? [500, 'no answer'];
        const json = typeof answer !== 'string';
        res.writeHead(status, { 'content-type': json ? 'application/json' : 'text/plain' });
        res.end(json ? JSON.stringify(answer) : answer);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('sends the token as a bearer and unwraps a 2xx body', async () => {
    const client = createFleetClient({ baseUrl, token: 'tok-123' });
    const job = await unwrap(client.GET('/v1/jobs/{id}', { params: { path: { id: 'job-1' } } }));
    assert.deepEqual(job, { id: 'job-1', state: 'succeeded' });
    assert.equal(seen.at(-1)?.authorization, 'Bearer tok-123');
  });

  it('sends no authorization header without a token', async () => {
    const client = createFleetClient({ baseUrl });
    await unwrap(client.GET('/v1/jobs/{id}', { params: { path: { id: 'job-1' } } }));
    assert.equal(seen.at(-1)?.authorization, undefined);
  });

  it("throws ApiError with the hub's code, message and details", async () => {
    const client = createUncheckedClient({ baseUrl, token: 'tok-123' });
    const failed = await unwrap(client.POST('/v1/devices/dev-1/power', { body: { action: 'sideways' } })).then(
      () => assert.fail('a 400 must throw'),
      (e: unknown) => e,
    );
    assert.ok(failed instanceof ApiError);
    assert.equal(failed.status, 400);
    assert.equal(failed.code, 'INVALID_ARGUMENT');
    assert.equal(failed.message, 'invalid request');
    assert.deepEqual(failed.details, [{ field: 'action', issue: 'must be one of on, off' }]);
    assert.equal(seen.at(-1)?.body, '{"action":"sideways"}');
  });

  it('throws ApiError on any other status, code HTTP_<status> when the body is not the hub error shape', async () => {
    const client = createFleetClient({ baseUrl, token: 'tok-123' });
    await assert.rejects(unwrap(client.GET('/v1/jobs/{id}', { params: { path: { id: 'missing' } } })), {
      name: 'ApiError',
      status: 404,
      code: 'NOT_FOUND',
      message: 'job missing not found',
    });
    await assert.rejects(unwrap(client.GET('/v1/sites')), {
      status: 502,
      code: 'HTTP_502',
      message: 'upstream unavailable',
      details: [],
    });
  });

  it('sends bytes as they are with octetStream', async () => {
    const client = createFleetClient({ baseUrl, token: 'tok-123' });
    const pkg = await unwrap(
      client.POST('/v1/firmware/packages', {
        params: { query: { file_name: 'a.fwpkg' } },
        body: new TextEncoder().encode('raw bytes'),
        ...octetStream,
      }),
    );
    assert.equal(pkg.id, 'pkg-1');
    assert.deepEqual(seen.at(-1), {
      url: '/v1/firmware/packages?file_name=a.fwpkg',
      authorization: 'Bearer tok-123',
      contentType: 'application/octet-stream',
      body: 'raw bytes',
    });
  });

  it('uses the fetch it is given', async () => {
    const urls: string[] = [];
    const client = createFleetClient({
      baseUrl,
      token: 'tok-123',
      fetch: (request) => {
        urls.push(request.url);
        return fetch(request);
      },
    });
    await unwrap(client.GET('/v1/jobs/{id}', { params: { path: { id: 'job-1' } } }));
    assert.deepEqual(urls, [`${baseUrl}/v1/jobs/job-1`]);
  });
});

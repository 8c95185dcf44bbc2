import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { getSite, insertDevice, insertSite, type DbHandle } from '@fleet/db';
import { SITE_ID_PATTERN, SITE_ID_RULE, nodeTypes } from '@fleet/domain';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// What the hub accepts and answers, held to its own /openapi.json: control characters, enum filters,
// site IDs, undeclared methods, media types, empty cursors and Fastify's own errors.

type OpenApi = {
  paths: Record<
    string,
    Record<
      string,
      { parameters?: { name: string; in: string; schema: { pattern?: string } }[]; responses: Record<string, unknown> }
    >
  >;
};

describe('hub API contract', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let tokens: TestHub['tokens'];
  let openapi: OpenApi;

  before(async () => {
    hub = await startTestHub({ maxPackageBytes: 1 << 20 });
    ({ handle, app, tokens } = hub);
    await insertSite(handle.db, { id: 'lab', name: 'Lab' });
    await insertDevice(handle.db, {
      name: 'tray-0',
      siteId: 'lab',
      nodeType: 'compute_gb200_nvidia',
      role: 'compute-tray',
      bmcUrl: 'http://127.0.0.1:9000',
      credentialRef: 'bmc/default',
    });
    await insertDevice(handle.db, {
      name: 'tray-1',
      siteId: 'lab',
      nodeType: 'compute_gb200_nvidia',
      role: 'compute-tray',
      bmcUrl: 'http://127.0.0.1:9001',
      credentialRef: 'bmc/default',
    });
    openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  after(() => hub.close());

  const get = (url: string, token = tokens.viewer) =>
    app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  const post = (url: string, body: unknown, token = tokens.operator) =>
    app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: body as object });

  /** A 400 in Fleet's shape whose first detail names `field`. */
  const assertInvalid = (
    res: {
      statusCode: number;
      json(): { error: { code: string; message: string; details?: { field: string; issue: string }[] } };
    },
    field: string,
    issue?: RegExp,
  ) => {
    assert.equal(res.statusCode, 400, JSON.stringify(res.json()));
    const { error } = res.json();
    assert.equal(error.code, 'INVALID_ARGUMENT');
    assert.equal(error.details?.[0]?.field, field);
    if (issue) assert.match(error.details![0]!.issue, issue);
  };

  it('a NUL in a query parameter is a 400 naming the parameter, on every kind of filter', async () => {
    for (const [url, field] of [
      ['/v1/racks?site_id=%00', 'query.site_id'],
      ['/v1/devices?firmware_version=1.0%00', 'query.firmware_version'],
      ['/v1/devices?vendor=nvidia&vendor=a%00', 'query.vendor.1'],
      ['/v1/firmware/packages?file_name=a%00', 'query.file_name'],
      ['/v1/firmware/compliance?site_id=lab%00', 'query.site_id'],
      ['/v1/devices?cursor=%00', 'query.cursor'],
    ] as const) {
      assertInvalid(await get(url), field, /control characters/);
    }
  });

  it('a NUL or other control character in a path parameter is a 400 naming it', async () => {
    assertInvalid(await get('/v1/sites/lab%00'), 'path.id', /control characters/);
    assertInvalid(await get('/v1/sites/lab%1b/maintenance-windows'), 'path.id', /control characters/);
  });

  it('a NUL in any body field is a 400 naming the field, nested ones included', async () => {
    assertInvalid(
      await post('/v1/power-batches', { action: 'on', filter: { role: ['compute\u0000'] } }),
      'body.filter.role.0',
      /control characters/,
    );
    assertInvalid(
      await post('/v1/sites', { id: 'lab2', name: 'Lab\u00002' }, tokens.admin),
      'body.name',
      /control characters/,
    );
    assertInvalid(
      await post('/v1/firmware-campaigns', { name: 'c\u007f', site_id: 'lab', dry_run: true }),
      'body.name',
      /control characters/,
    );
    assert.equal((await handle.pool.query(`select count(*)::int as n from sites where id = 'lab2'`)).rows[0].n, 0);
  });

  it('a control character in a header is a 400 in Fleet’s shape naming the header', async () => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('GET /v1/sites HTTP/1.1\r\nHost: x\r\nX-Note: a\u0000b\r\n\r\n'),
      );
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 400 /);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assert.equal(body.error.code, 'INVALID_ARGUMENT');
    assert.equal(body.error.details[0].field, 'header.X-Note');
    assert.match(body.error.message, /control characters/);
  });

  it('an unknown value in an enum filter is a 400 listing the allowed values, not an empty page', async () => {
    const role = await get('/v1/devices?role=compute');
    assertInvalid(role, 'query.role', /compute-tray/);
    assert.equal((await get('/v1/devices?role=compute-tray')).json().items.length, 2);
    assertInvalid(
      await post('/v1/power-batches', { action: 'on', filter: { role: ['compute'] } }),
      'body.filter.role',
      /compute-tray/,
    );
    const nodeType = await get('/v1/devices?node_type=compute');
    assertInvalid(nodeType, 'query.node_type.0');
    for (const t of nodeTypes) assert.match(nodeType.json().error.message, new RegExp(t));
  });

  /** Every place in the document whose schema carries `pattern`, as its list of keys. */
  const patternsIn = (value: unknown, pattern: string, path: string[] = []): string[][] => {
    if (!value || typeof value !== 'object') return [];
    const here = (value as { pattern?: unknown }).pattern === pattern ? [path] : [];
    return [...here, ...Object.entries(value).flatMap(([key, item]) => patternsIn(item, pattern, [...path, key]))];
  };

  it(`a new site's ID must be a lower-case DNS label, and the document gives the pattern on that field \
only`, async () => {
    for (const bad of ['R_1', 'a b', 'x'.repeat(64), '-lab', 'lab-']) {
      const res = await post('/v1/sites', { id: bad, name: 'Bad' }, tokens.admin);
      assertInvalid(res, 'body.id', /DNS label/);
      assert.ok(res.json().error.details[0].issue.includes(SITE_ID_RULE), res.body);
    }
    for (const good of ['r', 'r0', 'x'.repeat(63)]) {
      assert.equal((await post('/v1/sites', { id: good, name: good }, tokens.admin)).statusCode, 201);
      assert.equal((await get(`/v1/sites/${good}`)).statusCode, 200);
    }
    assert.deepEqual(patternsIn(openapi.paths, SITE_ID_PATTERN.source), [
      ['/v1/sites', 'post', 'requestBody', 'content', 'application/json', 'schema', 'properties', 'id'],
    ]);
  });

  it(`a site whose ID predates the DNS-label rule is read, filtered on and referenced, but cannot be created \
again`, async () => {
    // Registered or mirrored before the rule; nothing renames it, since task queues and jobs refer to it.
    await handle.pool.query(`insert into sites (id, name) values ('Legacy_Site', 'Legacy')`);
    const [rack] = (
      await handle.pool.query(`insert into racks (site_id, name) values ('Legacy_Site', 'rack-L') returning id`)
    ).rows;
    await handle.pool.query(
      `insert into devices (name, site_id, rack_id, node_type, role, bmc_url, credential_ref) values ` +
        `('legacy-tray', 'Legacy_Site', $1, 'compute_gb200_nvidia', 'compute-tray', 'http://127.0.0.1:9010', ` +
        `'bmc/default')`,
      [rack.id],
    );

    const site = await get('/v1/sites/Legacy_Site');
    assert.equal(site.statusCode, 200, site.body);
    assert.equal(site.json().id, 'Legacy_Site');
    assert.deepEqual(
      (await get('/v1/racks?site_id=Legacy_Site')).json().items.map((r: { name: string }) => r.name),
      ['rack-L'],
    );
    assert.deepEqual(
      (await get('/v1/devices?site_id=Legacy_Site')).json().items.map((d: { name: string }) => d.name),
      ['legacy-tray'],
    );
    for (const url of [
      '/v1/firmware/compliance?site_id=Legacy_Site',
      '/v1/firmware-campaigns?site_id=Legacy_Site',
      '/v1/sites/Legacy_Site/maintenance-windows',
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    }

    const device = await post(
      '/v1/devices',
      {
        name: 'legacy-tray-2',
        site_id: 'Legacy_Site',
        node_type: 'compute_gb200_nvidia',
        bmc_url: 'http://127.0.0.1:9011',
        credential_ref: 'bmc/default',
      },
      tokens.admin,
    );
    assert.equal(device.statusCode, 201, device.body);
    assert.equal(device.json().site_id, 'Legacy_Site');
    const campaign = await post('/v1/firmware-campaigns', { name: 'legacy', site_id: 'Legacy_Site', dry_run: true });
    assert.equal(campaign.statusCode, 200, campaign.body);
    for (const body of [{ site_id: 'Legacy_Site' }, { filter: { site_id: ['Legacy_Site'] } }]) {
      const batch = await post('/v1/power-batches', { action: 'on', ...body });
      assert.equal(batch.statusCode, 202, `${JSON.stringify(body)}: ${batch.body}`);
    }

    // A reference to a site that does not exist answers as it always did, naming the field.
    assert.equal((await get('/v1/sites/No_Such_Site')).statusCode, 404);
    assertInvalid(
      await post(
        '/v1/devices',
        {
          name: 'x',
          site_id: 'No_Such_Site',
          node_type: 'compute_gb200_nvidia',
          bmc_url: 'http://127.0.0.1:9012',
          credential_ref: 'bmc/default',
        },
        tokens.admin,
      ),
      'body.site_id',
      /does not exist/,
    );
    assertInvalid(await get(`/v1/racks?site_id=${'x'.repeat(101)}`), 'query.site_id.0', /at most 100/);

    const again = await post('/v1/sites', { id: 'Legacy_Site', name: 'Legacy' }, tokens.admin);
    assertInvalid(again, 'body.id');
    assert.equal(again.json().error.details[0].issue, `must be ${SITE_ID_RULE}`);
  });

  it('the role filter documents NetBox role slugs and the 400 for a role no device has', async () => {
    const devices = openapi.paths['/v1/devices']!['get']!.parameters!.find((p) => p.name === 'role')!.schema as {
      description?: string;
    };
    const batch = openapi.paths['/v1/power-batches']!['post'] as unknown as {
      requestBody: {
        content: {
          'application/json': {
            schema: { properties: { filter: { properties: { role: { description?: string } } } } };
          };
        };
      };
    };
    for (const description of [
      devices.description,
      batch.requestBody.content['application/json'].schema.properties.filter.properties.role.description,
    ]) {
      assert.match(description ?? '', /NetBox device role slugs/);
      assert.match(description ?? '', /400 whose message lists the known ones/);
    }
  });

  it('a method a path does not declare is a 405 with Allow; an unknown path stays a 404', async () => {
    const del = await app.inject({
      method: 'DELETE',
      url: '/v1/sites',
      headers: { authorization: `Bearer ${tokens.admin}` },
    });
    assert.equal(del.statusCode, 405);
    assert.equal(del.headers['allow'], 'GET, HEAD, POST');
    assert.equal(del.json().error.code, 'INVALID_ARGUMENT');
    const patch = await app.inject({
      method: 'PATCH',
      url: '/v1/devices/00000000-0000-4000-8000-000000000000',
      payload: {},
    });
    assert.equal(patch.statusCode, 405);
    assert.equal(patch.headers['allow'], 'GET, HEAD');
    const put = await app.inject({ method: 'PUT', url: '/v1/firmware/packages?x=1' });
    assert.equal(put.statusCode, 405);
    assert.equal(put.headers['allow'], 'GET, HEAD, POST');
    // Fastify reads the body of an unrouted QUERY too, and would refuse it for its missing Content-Type.
    const query = await app.inject({ method: 'QUERY' as 'GET', url: '/v1/sites' });
    assert.equal(query.statusCode, 405, query.body);
    assert.equal(query.headers['allow'], 'GET, HEAD, POST');
    const unknown = await app.inject({ method: 'DELETE', url: '/v1/nothing-here' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.code, 'NOT_FOUND');
  });

  it('a body of another media type is a 415 saying to send application/json, and 415 is documented', async () => {
    for (const type of ['application/xml', 'text/plain']) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/sites',
        headers: { authorization: `Bearer ${tokens.admin}`, 'content-type': type },
        payload: '<site/>',
      });
      assert.equal(res.statusCode, 415, type);
      assert.equal(res.json().error.code, 'INVALID_ARGUMENT');
      assert.match(res.json().error.message, /Content-Type: application\/json/);
      assert.equal(res.json().error.details[0].field, 'header.Content-Type');
    }
    for (const [path, method] of [
      ['/v1/sites', 'post'],
      ['/v1/power-batches', 'post'],
      ['/v1/sites/{id}/maintenance-windows', 'put'],
      ['/v1/firmware/packages', 'post'],
    ] as const) {
      assert.ok(openapi.paths[path]![method]!.responses['415'], `${method} ${path} documents 415`);
    }
  });

  it('an empty cursor is the first page', async () => {
    for (const url of [
      '/v1/devices?cursor=',
      '/v1/firmware-campaigns?cursor=',
      '/v1/firmware/packages?cursor=',
      '/v1/firmware/manifests?cursor=',
      '/v1/firmware/compliance?cursor=',
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    }
    assert.deepEqual(
      (await get('/v1/devices?cursor=&limit=1')).json().items,
      (await get('/v1/devices?limit=1')).json().items,
    );
  });

  it("Fastify's own 4xx (malformed JSON, a bad percent-encoding) answer in Fleet's shape", async () => {
    const json = await app.inject({
      method: 'POST',
      url: '/v1/sites',
      headers: { authorization: `Bearer ${tokens.admin}`, 'content-type': 'application/json' },
      payload: '{"id":',
    });
    assertInvalid(json, 'body');
    const url = await get('/v1/sites/%zz');
    assertInvalid(url, 'path', /percent-encoding/);
  });

  it('a dry-run campaign answers 200 with its plan, and the document lists 200 next to 202', async () => {
    const res = await post('/v1/firmware-campaigns', { name: 'dry', site_id: 'lab', dry_run: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(res.json().plan);
    const responses = openapi.paths['/v1/firmware-campaigns']!['post']!.responses;
    assert.ok(responses['200'] && responses['202']);
    for (const code of ['400', '401', '403', '409', '413', '415']) assert.ok(responses[code], `documents ${code}`);
  });
});

describe('hub log', () => {
  /** An info-level logger whose lines (JSON texts) the test reads. */
  const capturedLog = () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        lines.push(String(chunk));
        done();
      },
    });
    return { lines, log: pino({ level: 'info' }, sink) };
  };

  it('writes one access line per request as it ends, or as the client leaves: no headers, no token', async () => {
    const { lines, log } = capturedLog();
    const hub = await startTestHub({ log });
    try {
      // A response that never comes, as an event stream's: the client gives up.
      hub.app.get('/test/never', () => new Promise(() => undefined));
      const url = await hub.app.listen({ host: '127.0.0.1', port: 0 });
      const res = await fetch(`${url}/v1/sites?limit=5`, {
        headers: { 'x-request-id': 'r-access', authorization: 'Bearer not-a-token-anyone-has' },
      });
      assert.equal(res.status, 401);
      await res.arrayBuffer();
      const gone = new AbortController();
      const never = fetch(`${url}/test/never`, { headers: { 'x-request-id': 'r-gone' }, signal: gone.signal });
      await setTimeout(100);
      gone.abort();
      await assert.rejects(never);
      const loggedFor = (id: string) =>
        lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['reqId'] === id);
      // Each line is written as its response ends or its connection closes, which the client may see first.
      for (let i = 0; i < 100 && loggedFor('r-access').length + loggedFor('r-gone').length < 2; i++)
        await setTimeout(10);
      const fields = ({ msg, method, url, remoteAddress, statusCode }: Record<string, unknown>) => ({
        msg,
        method,
        url,
        remoteAddress,
        statusCode,
      });
      const remoteAddress = '127.0.0.1';
      assert.deepEqual(loggedFor('r-access').map(fields), [
        { msg: 'request completed', method: 'GET', url: '/v1/sites?limit=5', remoteAddress, statusCode: 401 },
      ]);
      assert.deepEqual(loggedFor('r-gone').map(fields), [
        { msg: 'request aborted', method: 'GET', url: '/test/never', remoteAddress, statusCode: undefined },
      ]);
      for (const l of [...loggedFor('r-access'), ...loggedFor('r-gone')])
        assert.equal(typeof l['responseTime'], 'number');
      assert.doesNotMatch(lines.join(''), /not-a-token-anyone-has/);
    } finally {
      await hub.close();
    }
  });

  it('logs a failed statement whole but never its parameter values', async () => {
    const { lines, log } = capturedLog();
    const hub = await startTestHub({ log });
    try {
      // The statement the original defect failed on: Postgres cannot take a NUL, and drizzle's error carries the
      // parameters.
      hub.app.get('/test/failing-statement', async () => getSite(hub.handle.db, 'secret-parameter-value\u0000'));
      const res = await hub.app.inject({
        method: 'GET',
        url: '/test/failing-statement',
        headers: { 'x-request-id': 'r-log' },
      });
      assert.equal(res.statusCode, 500);
      assert.match(res.json().error.message, /r-log/);
      const logged = lines
        .map(
          (l) =>
            JSON.parse(l) as {
              level: number;
              reqId?: string;
              err?: { message: string; cause?: { message: string; code: string } };
            },
        )
        .find((l) => l.level >= 50);
      assert.ok(logged?.err, lines.join(''));
      assert.equal(logged.reqId, 'r-log');
      assert.doesNotMatch(lines.join(''), /secret-parameter-value/);
      assert.match(logged.err.message, /^Failed query: select .* from "sites"/);
      assert.match(logged.err.cause!.message, /invalid byte sequence for encoding "UTF8": 0x00/);
      assert.equal(logged.err.cause!.code, '22021');
    } finally {
      await hub.close();
    }
  });
});

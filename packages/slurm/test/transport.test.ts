import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SlurmClient, SlurmError, tokenFromFile, type SlurmErrorKind } from '../src/index.js';

// How answers map to SlurmErrors, against a stand-in server that answers what each test sets. The answers copy
// what slurmrestd 22.05 (openapi/v0.0.38) sends; slurmrestd.test.ts checks the real one.
type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

describe('slurmrestd transport', () => {
  let server: Server;
  let url: string;
  let handler: Handler = (_req, _body, res) => res.end();
  const seen: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const client = (opts: Partial<ConstructorParameters<typeof SlurmClient>[0]> = {}) =>
    new SlurmClient({ url, user: 'root', token: 'jwt-1', ...opts });
  const failure = async (p: Promise<unknown>): Promise<SlurmError> => {
    const err = await p.then(
      () => assert.fail('expected a SlurmError'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof SlurmError, String(err));
    return err;
  };

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
        handler(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('sends the user and token headers and the submit body slurmrestd needs', async () => {
    seen.length = 0;
    handler = (_req, _body, res) => json(res, 200, { meta: {}, errors: [], job_id: 12, step_id: 'BATCH' });
    const slurm = client();
    const id = await slurm.submit({ script: '#!/bin/sh\ntrue\n', name: 'k-1', cwd: '/w', stdout: '/w/%j.out' });
    await slurm.close();
    assert.equal(id, 12);
    const req = seen[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/slurm/v0.0.38/job/submit');
    assert.equal(req.headers['x-slurm-user-name'], 'root');
    assert.equal(req.headers['x-slurm-user-token'], 'jwt-1');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(req.body), {
      script: '#!/bin/sh\ntrue\n',
      job: {
        name: 'k-1',
        current_working_directory: '/w',
        environment: { PATH: '/usr/local/bin:/usr/bin:/bin' },
        standard_output: '/w/%j.out',
      },
    });
  });

  it('reads the token file before each request (a renewed token is used)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slurm-token-'));
    const file = join(dir, 'token');
    writeFileSync(file, 'SLURM_JWT=first\n');
    seen.length = 0;
    handler = (_req, _body, res) => json(res, 200, { errors: [], jobs: [] });
    const slurm = client({ token: tokenFromFile(file) });
    await slurm.listJobs();
    writeFileSync(file, 'second\n');
    await slurm.listJobs();
    await slurm.close();
    rmSync(dir, { recursive: true });
    assert.deepEqual(
      seen.map((r) => r.headers['x-slurm-user-token']),
      ['first', 'second'],
    );
  });

  const cases: { name: string; status: number; body: unknown; kind: SlurmErrorKind; text: RegExp }[] = [
    {
      name: 'a bad partition',
      status: 500,
      body: { errors: [{ error_code: 2000, error: 'Invalid partition name specified' }] },
      kind: 'InvalidPartition',
      text: /Invalid partition name specified \(slurm error 2000\) \(HTTP 500\)/,
    },
    {
      name: 'an unknown job',
      status: 500,
      body: {
        errors: [{ description: 'Unable to find JobId=9', error_number: 2017, error: 'Invalid job id specified' }],
      },
      kind: 'NotFound',
      text: /Invalid job id specified: Unable to find JobId=9 \(slurm error 2017\)/,
    },
    {
      name: 'a submit without environment',
      status: 400,
      body: { errors: [{ error: 'environment must be set', error_code: 2127 }] },
      kind: 'InvalidArgument',
      text: /environment must be set/,
    },
    { name: 'no user header', status: 401, body: 'Authentication failure', kind: 'Unauthenticated', text: /failure/ },
    { name: 'another API version', status: 404, body: 'Unable find requested URL.', kind: 'Protocol', text: /URL/ },
    {
      name: 'a refused token or a dead slurmctld',
      status: 500,
      body: {
        errors: [{ error_number: -1, error: 'Unspecified error', description: 'Failed while looking for jobs' }],
      },
      kind: 'Internal',
      text: /Failed while looking for jobs \(slurm error -1\)/,
    },
    {
      name: 'errors on a 200',
      status: 200,
      body: { errors: [{ error: 'something odd' }], jobs: [] },
      kind: 'Internal',
      text: /something odd/,
    },
    { name: 'an answer that is not JSON', status: 200, body: '<html>', kind: 'Protocol', text: /unexpected answer/ },
    {
      name: 'jobs of the wrong shape',
      status: 200,
      body: { errors: [], jobs: [{ job_id: 'one' }] },
      kind: 'Protocol',
      text: /jobs\.0\.job_id/,
    },
  ];
  for (const c of cases)
    it(`reports ${c.name} as ${c.kind}, naming the URL`, async () => {
      handler = (_req, _body, res) =>
        typeof c.body === 'string' ? res.writeHead(c.status).end(c.body) : json(res, c.status, c.body);
      const slurm = client();
      const err = await failure(slurm.listJobs());
      await slurm.close();
      assert.equal(err.kind, c.kind);
      assert.equal(err.status, c.status);
      assert.ok(err.message.includes(`GET ${url}/slurm/v0.0.38/jobs`), err.message);
      assert.match(err.message, c.text);
    });

  it('gives errorCode from error_code or error_number', async () => {
    handler = (_req, _body, res) => json(res, 500, { errors: [{ error: 'x' }, { error_number: 2017 }] });
    const slurm = client();
    assert.equal((await failure(slurm.getJob(9))).errorCode, 2017);
    await slurm.close();
  });

  it('reports no answer in time as Timeout', async () => {
    handler = (_req, _body, res) => setTimeout(() => json(res, 200, { errors: [], jobs: [] }), 1_000);
    const slurm = client({ requestTimeoutMs: 100 });
    const err = await failure(slurm.listJobs());
    await slurm.close();
    assert.equal(err.kind, 'Timeout');
    assert.equal(err.retryable, true);
  });

  it('reports a refused connection as Unavailable', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const slurm = new SlurmClient({ url: `http://127.0.0.1:${port}`, user: 'root', token: 't' });
    const err = await failure(slurm.ping());
    await slurm.close();
    assert.equal(err.kind, 'Unavailable');
    assert.match(err.message, /ECONNREFUSED/);
  });

  it('refuses a script without #! before sending it', async () => {
    seen.length = 0;
    const slurm = client();
    const err = await failure(slurm.submit({ script: 'echo hi', name: 'n', cwd: '/' }));
    await slurm.close();
    assert.equal(err.kind, 'InvalidArgument');
    assert.equal(seen.length, 0);
  });

  it('fails a ping where no controller is UP', async () => {
    handler = (_req, _body, res) =>
      json(res, 200, { errors: [], pings: [{ hostname: 'c1', ping: 'DOWN', status: -1, mode: 'primary' }] });
    const slurm = client();
    assert.equal((await failure(slurm.ping())).kind, 'Unavailable');
    await slurm.close();
  });
});

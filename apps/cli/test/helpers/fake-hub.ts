import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Job } from '@fleet/client';
import { describeFailure } from '../../src/exit-codes.js';
import { buildProgram } from '../../src/program.js';

// A fake hub for fleetctl's unit tests: it records every request and answers what the test's router says, and
// fleetctl runs in process against it as main.ts runs it.

export const JOB = '0b6f0000-0000-4000-8000-000000000001';

export interface RecordedRequest {
  method: string;
  url: string;
  body: unknown;
  idempotencyKey: string | undefined;
}

export type Answer = { status: number; body: unknown };

/** A job as the hub answers it, queued on site dev-01; `overrides` set the kind, target, state and the rest. */
export function jobFixture(overrides: Partial<Job> = {}): Job {
  return {
    id: JOB,
    kind: 'device.quarantine',
    state: 'queued',
    target: { device_id: null, rack_id: null, site_id: 'dev-01' },
    created_by: 'test-operator',
    created_at: '2030-01-01T00:00:00Z',
    started_at: null,
    finished_at: null,
    parent_id: null,
    params: {},
    progress: null,
    timeline: null,
    result: null,
    error: null,
    workflow_id: JOB,
    links: { self: `/v1/jobs/${JOB}`, temporal_ui: null },
    ...overrides,
  };
}

export interface FakeHub {
  /** What fleetctl sent since the last reset, in order (the event stream left out). */
  requests: RecordedRequest[];
  /** fleetctl in process with a context for this hub: the exit code describeFailure gives, stdout and stderr. */
  fleetctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): void;
}

/**
 * Starts the hub; `route` answers a request or leaves it to a 404 naming it, and `requests` (the test's own array, if
 * given) records them. The event stream is a 404, so watchers fall back to polling.
 */
export async function startFakeHub(
  route: (request: RecordedRequest) => Answer | undefined,
  requests: RecordedRequest[] = [],
): Promise<FakeHub> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const url = req.url ?? '';
      const answer = ({ status, body }: Answer) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (url === '/v1/events') return answer({ status: 404, body: { error: { code: 'NOT_FOUND', message: url } } });
      const request: RecordedRequest = {
        method: req.method!,
        url,
        body: text ? JSON.parse(text) : undefined,
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      };
      requests.push(request);
      answer(
        route(request) ?? {
          status: 404,
          body: { error: { code: 'NOT_FOUND', message: `${request.method} ${url}` } },
        },
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const dir = mkdtempSync(join(tmpdir(), 'fleetctl-fake-hub-'));
  const env: NodeJS.ProcessEnv = { FLEET_CONFIG: join(dir, 'config.yaml') };
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  writeFileSync(env['FLEET_CONFIG']!, `currentContext: fake\ncontexts:\n  fake:\n    hub: ${url}\n`);
  return {
    requests,
    fleetctl: async (...args) => {
      const stdout = capture();
      const stderr = capture();
      let code = 0;
      let errors = '';
      try {
        await buildProgram(env, stdout.stream, stderr.stream).parseAsync(args, { from: 'user' });
      } catch (err) {
        const failure = describeFailure(err);
        code = failure.code;
        errors = failure.lines.map((l) => `${l}\n`).join('');
      }
      return { code, stdout: stdout.text(), stderr: stderr.text() + errors };
    },
    close: () => {
      server.closeAllConnections();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function capture(): { stream: NodeJS.WriteStream; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream: stream as NodeJS.WriteStream, text: () => text };
}

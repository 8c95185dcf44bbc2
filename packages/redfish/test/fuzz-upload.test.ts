import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pushFirmware, RedfishClient, waitForTask } from '../src/index.js';
import {
  assertTypedRedfishError,
  fuzzCases,
  fuzzedServer,
  runFuzzCases,
  watchProcess,
  type Answer,
  type FuzzTarget,
} from './helpers/fuzz.js';
import { captureDocument, credentials, extractGh200 } from './helpers/servers.js';

// Issue 20, the firmware push: the multipart upload to the GH200 capture's MultipartHttpPushUri and the task it
// starts, with the answers corrupted at random. Beyond "a result or a typed error in time", the upload is a
// non-idempotent POST: it may go again only after an answer that says the BMC did not take it (503). Longer run:
// FLEET_FUZZ_CASES=2000 pnpm test packages/redfish/test/fuzz-upload.test.ts

const CASES = fuzzCases(120);
const timeouts = {
  requestTimeoutMs: 250,
  uploadTimeoutMs: 500,
  maxAttempts: 3,
  retryBaseDelayMs: 1,
  maxRetryDelayMs: 40,
};
const maxResponseBytes = 512 * 1024;
const pushUri = '/redfish/v1/UpdateService/update-multipart';
const taskUri = '/redfish/v1/TaskService/Tasks/7';
const poll = { pollIntervalMs: 5, timeoutMs: 300 };

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: Buffer.from(JSON.stringify(body)),
});

/** The capture for reads; the push takes the whole body, then answers 202 with its task, which reads Completed. */
function bmcAnswers(root: string) {
  return async (req: IncomingMessage, path: string): Promise<Answer> => {
    if (req.method === 'POST' && path === pushUri) {
      for await (const chunk of req) void chunk;
      return json(202, { '@odata.id': taskUri, Id: '7', TaskState: 'Running' }, { location: taskUri });
    }
    if (req.method === 'GET' && path === taskUri)
      return json(200, {
        '@odata.id': taskUri,
        Id: '7',
        TaskState: 'Completed',
        TaskStatus: 'OK',
        PercentComplete: 100,
      });
    const doc = req.method === 'GET' ? captureDocument(root, path.replace(/\/+$/, '')) : undefined;
    return doc && doc !== 'bad-path'
      ? { status: 200, headers: { 'content-type': 'application/json' }, body: doc }
      : json(404, { error: { message: `no ${path}` } });
  };
}

describe('Redfish fuzz: the firmware push', () => {
  let gh200: ReturnType<typeof extractGh200>;
  let dir: string;
  let image: string;
  let target: FuzzTarget<RedfishClient>;
  const watch = watchProcess();

  before(async () => {
    gh200 = extractGh200();
    dir = mkdtempSync(join(tmpdir(), 'fleet-fuzz-push-'));
    image = join(dir, 'nvfw_GB200-P4975_fuzz.fwpkg');
    writeFileSync(image, randomBytes(256 * 1024));
    target = {
      name: 'gh200',
      ops: [
        ['push', (c) => pushFirmware(c, { filePath: image })],
        ['push and wait', async (c) => waitForTask(c, (await pushFirmware(c, { filePath: image })).taskUri, poll)],
      ],
      ...(await fuzzedServer(bmcAnswers(gh200.root), 4 * maxResponseBytes)),
    };
  });
  after(async () => {
    watch.stop();
    await target?.server.close();
    gh200?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`${CASES} cases: a task or a RedfishError, and the image is sent again only after a 503`, async (t) => {
    const tally = await runFuzzCases({
      cases: CASES,
      targets: [target],
      open: ({ server }) => new RedfishClient({ baseUrl: server.url, credentials, maxResponseBytes, ...timeouts }),
      typedOutcome: (err, { server }, label) => assertTypedRedfishError(err, server.url, label).code,
      budgetMs: (requests) =>
        requests * (timeouts.uploadTimeoutMs + timeouts.maxRetryDelayMs) + poll.timeoutMs * 2 + 1_000,
      ceilingMs: 30_000,
      afterCase: ({ fuzz }, label) => {
        const pushes = fuzz.log.filter((e) => e.line === `POST ${pushUri}`);
        const refused = pushes.filter((e) => /^(HTTP 503|503 Retry-After)/.test(e.how)).length;
        assert.ok(
          pushes.length <= refused + 1,
          `${label}\nthe image went ${pushes.length} times after ${refused} 503s`,
        );
      },
    });
    watch.assertNone();
    t.diagnostic(`outcomes: ${tally}`);
    for (const key of ['push: ok', 'push and wait: ok', 'push: Protocol'])
      assert.ok(tally.seen.has(key), `no "${key}" among ${tally}`);
  });
});

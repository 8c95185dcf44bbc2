import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  fuzzCases,
  fuzzedServer,
  runFuzzCases,
  watchProcess,
  type Answer,
  type FuzzOp,
  type FuzzTarget,
} from '../../redfish/test/helpers/fuzz.js';
import { readBody } from '../../redfish/test/helpers/servers.js';
import {
  applyConfig,
  findPendingAction,
  getCertificate,
  getImage,
  getPlatformFirmware,
  getSystem,
  getVersion,
  installImage,
  listImageFiles,
  NvueClient,
  NvueError,
  powerCycle,
  waitForAction,
  waitForBuild,
  waitUntilReady,
} from '../src/index.js';

// Issue 20, NVUE side: the NVOS REST client fed randomly corrupted answers in the shapes the NVOS simulator serves
// (packages/simulators/src/nvos/nvue-routes.ts). Every outcome is a parse or an NvueError naming the switch, method
// and URI, within the request timeouts. Longer run: FLEET_FUZZ_CASES=5000 pnpm test packages/nvue/test/fuzz.test.ts

const CASES = fuzzCases(200);
const timeouts = { requestTimeoutMs: 250, maxAttempts: 2, retryBaseDelayMs: 1, maxRetryDelayMs: 40 };
/** Above the client's limit set below: the oversized-body mutation must be refused, not buffered. */
const maxResponseBytes = 512 * 1024;
const poll = { pollIntervalMs: 5, timeoutMs: 300 };
const build = '25.02.4282';
const file = `nvos-amd64-${build}.bin`;

const action = (state: string, percentage: number) => ({
  state,
  status: `install ${file}`,
  detail: '',
  percentage,
  issue: [],
  'http-status': 200,
});

/** GET documents as the simulator answers them. */
const documents: Record<string, unknown> = {
  '/nvue_v1/system': { hostname: 'sw-1', build: `NVOS ${build}`, 'product-name': 'NVOS', uptime: 4242 },
  '/nvue_v1/system/version': {
    image: build,
    'product-name': 'NVOS',
    'product-release': build,
    kernel: '6.1.0-nvos-amd64',
  },
  '/nvue_v1/system/image': {
    current: 'partition1',
    next: 'partition1',
    partition1: { 'build-id': build },
    partition2: { 'build-id': '25.02.4000' },
    'issu-status': 'disabled',
  },
  '/nvue_v1/system/image/files': { [file]: { path: `/host/nos-images/${file}` } },
  '/nvue_v1/platform/firmware': Object.fromEntries(
    ['bmc', 'erot', 'fpga', 'cpld1', 'bios'].map((c) => [
      c.toUpperCase(),
      { 'actual-firmware': '1.2.3', 'installed-firmware': '1.2.4', type: c },
    ]),
  ),
  '/nvue_v1/system/security/certificate/site': { 'valid-to': '2027-01-01T00:00:00Z', installed: ['nvue-rest-api'] },
  '/nvue_v1/action': { '7': action('action_running', 40), '8': action('action_success', 100) },
  '/nvue_v1/action/7': action('action_success', 100),
  '/nvue_v1/revision/12': { state: 'applied', transition: { issue: {}, progress: '' } },
};

async function nvueAnswer(req: IncomingMessage, path: string): Promise<Answer> {
  const json = (status: number, body: unknown): Answer => ({
    status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(body)),
  });
  if (req.method === 'GET') {
    const doc = documents[path];
    return doc === undefined ? json(404, { title: 'Not Found', detail: `no ${path}` }) : json(200, doc);
  }
  await readBody(req);
  if (req.method === 'POST') return path === '/nvue_v1/revision' ? json(200, '12') : json(202, '7');
  return json(200, req.url?.includes('rev=') ? {} : documents['/nvue_v1/revision/12']);
}

const ops: FuzzOp<NvueClient>[] = [
  ['system', (c) => getSystem(c)],
  ['version', (c) => getVersion(c)],
  ['image', (c) => getImage(c)],
  ['image files', (c) => listImageFiles(c)],
  ['platform firmware', (c) => getPlatformFirmware(c)],
  ['certificate', (c) => getCertificate(c, 'site')],
  ['pending action', (c) => findPendingAction(c, (s) => s.includes(file))],
  ['wait for action', (c) => waitForAction(c, '7', poll)],
  ['power cycle', (c) => powerCycle(c)],
  ['install image', (c) => installImage(c, file, poll)],
  ['apply config', (c) => applyConfig(c, [{ path: '/system/api', body: { certificate: 'site' } }], poll)],
  ['wait for build', (c) => waitForBuild(c, build, poll)],
  ['ready', (c) => waitUntilReady(c, poll)],
];

describe('NVUE fuzz: corrupted answers in the simulator shapes', () => {
  let target: FuzzTarget<NvueClient>;
  const watch = watchProcess();

  before(async () => {
    target = { name: 'nvos', ops, ...(await fuzzedServer(nvueAnswer, 4 * maxResponseBytes)) };
  });
  after(async () => {
    watch.stop();
    await target.server.close();
  });

  it(`${CASES} cases: a parse or an NvueError naming switch, method and URI, within the timeouts`, async (t) => {
    const tally = await runFuzzCases({
      cases: CASES,
      targets: [target],
      open: ({ server }) =>
        new NvueClient({
          baseUrl: server.url,
          switchId: 'fuzz-switch',
          credentials: { username: 'admin', password: 'pw' },
          maxResponseBytes,
          ...timeouts,
        }),
      typedOutcome: (err, _target, label) => {
        assert.ok(err instanceof NvueError, `${label}\n${err instanceof Error ? err.stack : String(err)}`);
        assert.ok(err.uri.startsWith('/nvue_v1/'), `${label}: URI ${err.uri}`);
        assert.ok(err.message.includes('fuzz-switch') && err.message.includes(err.uri), `${label}: ${err.message}`);
        return err.kind;
      },
      budgetMs: (requests) =>
        requests * (timeouts.requestTimeoutMs + timeouts.maxRetryDelayMs) + poll.timeoutMs * 2 + 1_000,
      ceilingMs: 30_000,
    });
    watch.assertNone();
    t.diagnostic(`outcomes: ${tally}`);
    for (const key of ['image: ok', 'install image: ok', 'apply config: ok', 'platform firmware: ok'])
      assert.ok(tally.seen.has(key), `no "${key}" among ${tally}`);
  });
});

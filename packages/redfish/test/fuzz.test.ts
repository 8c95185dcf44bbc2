import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  chassisPowerState,
  findAccount,
  getFirmwareInventory,
  getMnnvlinkTopology,
  getPowerState,
  getPowerSubsystem,
  getUpdateService,
  listChassis,
  listTasks,
  readDeviceHealth,
  readPasswordPolicy,
  RedfishClient,
  resetChassis,
  resetSystem,
  setAccountPassword,
  waitForTask,
} from '../src/index.js';
import {
  assertTypedRedfishError,
  fuzzCases,
  fuzzedServer,
  runFuzzCases,
  watchProcess,
  type Answer,
  type FuzzOp,
  type FuzzTarget,
} from './helpers/fuzz.js';
import {
  captureDocument,
  credentials,
  expandedCollection,
  extractGh200,
  mockups,
  readBody,
} from './helpers/servers.js';

// Issue 20: the client and its readers fed randomly corrupted answers built from the real captures. Every outcome is
// a parse or a RedfishError naming the BMC and the URI, within the request timeouts; nothing escapes as a TypeError,
// an unhandled rejection or a hang. Longer run: FLEET_FUZZ_CASES=5000 pnpm test packages/redfish/test/fuzz.test.ts

const CASES = fuzzCases(240);
const timeouts = { requestTimeoutMs: 250, maxAttempts: 2, retryBaseDelayMs: 1, maxRetryDelayMs: 40 };
/** Above the client's limit set below: the oversized-body mutation must be refused, not buffered. */
const maxResponseBytes = 512 * 1024;

/** What a capture answers: documents for GETs, and what a BMC answers to the writes the operations send. */
function captureAnswers(root: string) {
  let sessions = 0;
  const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
    status,
    headers: { 'content-type': 'application/json', ...headers },
    body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
  });
  return async (req: IncomingMessage, path: string): Promise<Answer> => {
    const trimmed = path.replace(/\/+$/, '');
    if (req.method === 'GET') {
      const doc = captureDocument(root, trimmed);
      if (doc === 'bad-path') return json(400, { error: { message: 'bad path' } });
      // Collections expand as the captured BMC's root advertises, so corrupted inline members are fuzzed too.
      if (doc && new URL(req.url ?? '/', 'http://x').searchParams.get('$expand') === '.')
        return json(200, expandedCollection(root, doc));
      return doc
        ? { status: 200, headers: { 'content-type': 'application/json' }, body: doc }
        : json(404, { error: { message: `no ${trimmed}` } });
    }
    await readBody(req);
    if (req.method === 'POST' && trimmed.endsWith('/Sessions')) {
      const uri = `${trimmed}/fuzz${++sessions}`;
      return json(
        201,
        { '@odata.id': uri, Id: `fuzz${sessions}` },
        { 'x-auth-token': `tok${sessions}`, location: uri },
      );
    }
    if (req.method === 'PATCH') return json(200, {});
    return json(204, undefined);
  };
}

type Op = FuzzOp<RedfishClient>;

const gh200Ops: Op[] = [
  ['health', (c) => readDeviceHealth(c, { chassis: 'BMC_0', system: { id: undefined } })],
  ['firmware inventory', (c) => getFirmwareInventory(c)],
  ['update service', (c) => getUpdateService(c)],
  ['power state', (c) => getPowerState(c)],
  ['session login', (c) => getPowerState(c), 'session'],
  ['reset system', (c) => resetSystem(c, 'ForceRestart')],
  ['reset chassis', (c) => resetChassis(c, 'BMC_0', 'PowerCycle')],
  ['list chassis', (c) => listChassis(c)],
  ['list tasks', (c) => listTasks(c)],
  ['accounts', (c) => findAccount(c, 'fwupd')],
  ['topology', (c) => getMnnvlinkTopology(c)],
];
const rackmountOps: Op[] = [
  ['health', (c) => readDeviceHealth(c, { chassis: '1U', system: { id: undefined } })],
  ['firmware inventory', (c) => getFirmwareInventory(c)],
  ['task polling', (c) => waitForTask(c, '/redfish/v1/TaskService/Tasks/545', { pollIntervalMs: 5, timeoutMs: 300 })],
  ['list tasks', (c) => listTasks(c)],
  ['session login', (c) => getFirmwareInventory(c), 'session'],
  ['password policy', (c) => readPasswordPolicy(c)],
  ['set password', (c) => setAccountPassword(c, 'Administrator', 'n3w-Pass!')],
  ['power subsystem', (c) => getPowerSubsystem(c, '1U')],
  ['reset system', (c) => resetSystem(c, 'ForceRestart')],
];
const shelfOps: Op[] = [
  ['health', (c) => readDeviceHealth(c, { chassis: 'PowerShelf' })],
  ['power subsystem', (c) => getPowerSubsystem(c, 'PowerShelf')],
  ['chassis power', (c) => chassisPowerState(c, 'PowerShelf')],
  ['reset chassis', (c) => resetChassis(c, 'PowerShelf', 'PowerCycle')],
  ['session login', (c) => chassisPowerState(c, 'PowerShelf'), 'session'],
  ['accounts', (c) => findAccount(c, 'Administrator')],
];

describe('Redfish fuzz: corrupted answers from the captures', () => {
  let gh200: ReturnType<typeof extractGh200>;
  const targets: FuzzTarget<RedfishClient>[] = [];
  const watch = watchProcess();

  before(async () => {
    gh200 = extractGh200();
    for (const [name, root, ops] of [
      ['gh200', gh200.root, gh200Ops],
      ['public-rackmount1', join(mockups, 'public-rackmount1'), rackmountOps],
      ['public-power-shelf', join(mockups, 'public-power-shelf'), shelfOps],
    ] as const)
      targets.push({ name, ops, ...(await fuzzedServer(captureAnswers(root), 4 * maxResponseBytes)) });
  });
  after(async () => {
    watch.stop();
    for (const s of targets) await s.server.close();
    gh200?.cleanup();
  });

  it(`${CASES} cases: a parse or a RedfishError naming BMC and URI, within the timeouts`, async (t) => {
    const tally = await runFuzzCases({
      cases: CASES,
      targets,
      open: ({ server }, [, , auth]) =>
        new RedfishClient({
          baseUrl: server.url,
          credentials,
          device: 'fuzz-tray',
          maxResponseBytes,
          ...timeouts,
          ...(auth ? { auth: auth as 'session' } : {}),
        }),
      typedOutcome: (err, { server }, label) => assertTypedRedfishError(err, server.url, label).code,
      // Each request gets at most its timeout (and a capped backoff after it); the task wait its own deadline.
      budgetMs: (requests) => requests * (timeouts.requestTimeoutMs + timeouts.maxRetryDelayMs) + 300 + 1_000,
      ceilingMs: 30_000,
    });
    watch.assertNone();
    t.diagnostic(`outcomes: ${tally}`);
    // The mutations reach every kind of outcome, and most operations still succeed sometimes.
    for (const key of ['health: ok', 'firmware inventory: ok', 'session login: ok', 'Internal', 'NotFound', 'Timeout'])
      assert.ok(
        key.includes(':') ? tally.seen.has(key) : [...tally.seen.keys()].some((k) => k.endsWith(key)),
        `no "${key}" among ${tally}`,
      );
  });
});

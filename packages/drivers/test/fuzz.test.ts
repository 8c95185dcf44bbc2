import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NodeType } from '@fleet/domain';
import {
  assertTypedRedfishError,
  fuzzCases,
  fuzzedServer,
  runFuzzCases,
  watchProcess,
  type Answer,
  type FuzzOp,
  type FuzzTarget,
} from '../../redfish/test/helpers/fuzz.js';
import { captureDocument, credentials, extractGh200, mockups } from '../../redfish/test/helpers/servers.js';
import { driverFor, type NodeDriver } from '../src/index.js';

// Issue 20, driver side: the operations the satellite runs (health, probes, power, firmware inventory and task scan,
// hardware inventory) against corrupted capture answers. A driver returns, maps to a reading, or throws a
// RedfishError naming the BMC and the URI; nothing else. Longer run: FLEET_FUZZ_CASES=2000 pnpm test <this file>.

const CASES = fuzzCases(150);
const requestTimeoutMs = 250;

function readOnly(root: string) {
  return (req: IncomingMessage, path: string): Answer => {
    const doc = req.method === 'GET' ? captureDocument(root, path.replace(/\/+$/, '')) : undefined;
    return doc && doc !== 'bad-path'
      ? { status: 200, headers: { 'content-type': 'application/json' }, body: doc }
      : { status: req.method === 'GET' ? 404 : 204, headers: {}, body: Buffer.alloc(0) };
  };
}

const ops: FuzzOp<NodeDriver>[] = [
  ['readHealth', (d) => d.readHealth()],
  ['probe', (d) => d.probe()],
  ['probeManager', (d) => d.probeManager('bmc')],
  ['powerState', (d) => d.powerState()],
  ['firmware inventory', (d) => d.firmware.inventory()],
  ['task scan', (d) => d.firmware.findUpdateTask('fw.fwpkg')],
  ['hardware inventory', (d) => d.readHardwareInventory()],
];

describe('driver fuzz: corrupted answers from the captures', () => {
  let gh200: ReturnType<typeof extractGh200>;
  const targets: (FuzzTarget<NodeDriver> & { nodeType: NodeType })[] = [];
  const watch = watchProcess();

  before(async () => {
    gh200 = extractGh200();
    for (const [name, root, nodeType] of [
      ['gh200', gh200.root, 'compute_gb200_nvidia'],
      ['public-rackmount1', join(mockups, 'public-rackmount1'), 'switch_gb200_nvidia'],
      ['public-power-shelf', join(mockups, 'public-power-shelf'), 'powershelf_gb200_liteon'],
    ] as const)
      targets.push({ name, nodeType, ops, ...(await fuzzedServer(readOnly(root), 20 * 1024 * 1024)) });
  });
  after(async () => {
    watch.stop();
    for (const b of targets) await b.server.close();
    gh200?.cleanup();
  });

  it(`${CASES} cases: a result, a reading, or a RedfishError naming BMC and URI`, async (t) => {
    const tally = await runFuzzCases({
      cases: CASES,
      targets,
      open: ({ server, nodeType }) =>
        driverFor(nodeType)({
          target: { deviceId: 'fuzz-dev', nodeType, bmcUrl: server.url, credentialRef: 'fuzz' },
          credentials,
          redfish: { requestTimeoutMs, maxAttempts: 1 },
        }),
      typedOutcome: (err, { server }, label) => assertTypedRedfishError(err, server.url, label).code,
      // The driver's clients make one attempt per request: each request gets at most its timeout.
      budgetMs: (requests) => requests * requestTimeoutMs + 2_000,
      ceilingMs: 60_000,
    });
    watch.assertNone();
    t.diagnostic(`outcomes: ${tally}`);
    for (const key of ['readHealth: ok', 'hardware inventory: ok', 'firmware inventory: ok'])
      assert.ok(tally.seen.has(key), `no "${key}" among ${tally}`);
  });
});

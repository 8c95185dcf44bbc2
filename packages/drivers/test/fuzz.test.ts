import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NodeType } from '@fleet/domain';
import { RedfishError } from '@fleet/redfish';
import {
  caseRand,
  describeLog,
  fuzzCases,
  fuzzingHandler,
  fuzzSeed,
  Tally,
  watchProcess,
  withCeiling,
  type Answer,
} from '../../redfish/test/helpers/fuzz.js';
import {
  captureDocument,
  credentials,
  extractGh200,
  mockups,
  serve,
  type TestServer,
} from '../../redfish/test/helpers/servers.js';
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

type Op = [name: string, run: (d: NodeDriver) => Promise<unknown>];
const ops: Op[] = [
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
  const bmcs: { name: string; nodeType: NodeType; server: TestServer; fuzz: ReturnType<typeof fuzzingHandler> }[] = [];
  const watch = watchProcess();

  before(async () => {
    gh200 = extractGh200();
    for (const [name, root, nodeType] of [
      ['gh200', gh200.root, 'compute_gb200_nvidia'],
      ['public-rackmount1', join(mockups, 'public-rackmount1'), 'switch_gb200_nvidia'],
      ['public-power-shelf', join(mockups, 'public-power-shelf'), 'powershelf_gb200_liteon'],
    ] as const) {
      let url = '';
      const fuzz = fuzzingHandler(readOnly(root), { hugeBytes: 20 * 1024 * 1024, self: (p) => `${url}${p}` });
      const server = await serve(fuzz.handler);
      url = server.url;
      bmcs.push({ name, nodeType, server, fuzz });
    }
  });
  after(async () => {
    watch.stop();
    for (const b of bmcs) await b.server.close();
    gh200?.cleanup();
  });

  it(`${CASES} cases: a result, a reading, or a RedfishError naming BMC and URI`, async (t) => {
    const tally = new Tally();
    for (let i = 0; i < CASES; i++) {
      const { name, nodeType, server, fuzz } = bmcs[i % bmcs.length]!;
      const rand = caseRand(fuzzSeed, i);
      const [opName, run] = ops[rand(ops.length)]!;
      fuzz.reset(rand);
      const driver = driverFor(nodeType)({
        target: { deviceId: 'fuzz-dev', nodeType, bmcUrl: server.url, credentialRef: 'fuzz' },
        credentials,
        redfish: { requestTimeoutMs, maxAttempts: 1 },
      });
      const label = () => `seed ${fuzzSeed} case ${i} (${name}: ${opName})\n${describeLog(fuzz.log)}`;
      const before = server.requests.length;
      const started = performance.now();
      try {
        await withCeiling(() => run(driver), 60_000, label());
        tally.count(`${opName}: ok`);
      } catch (err) {
        assert.ok(err instanceof RedfishError, `${label()}\n${err instanceof Error ? err.stack : String(err)}`);
        assert.ok(err.message.includes(server.url) && err.uri && err.message.includes(err.uri), label());
        tally.count(`${opName}: ${err.code}`);
      } finally {
        await withCeiling(() => driver.close(), 5_000, `close of ${label()}`);
      }
      // The driver's clients make one attempt per request: each request gets at most its timeout.
      const elapsed = performance.now() - started;
      const requests = server.requests.length - before;
      assert.ok(
        elapsed <= requests * requestTimeoutMs + 2_000,
        `${label()}\ntook ${Math.round(elapsed)} ms for ${requests} requests`,
      );
    }
    watch.assertNone();
    t.diagnostic(`outcomes: ${tally}`);
    for (const key of ['readHealth: ok', 'hardware inventory: ok', 'firmware inventory: ok'])
      assert.ok(tally.seen.has(key), `no "${key}" among ${tally}`);
  });
});

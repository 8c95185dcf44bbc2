import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { insertDevice, insertSite, racks } from '@fleet/db';
import { checks, schemathesis } from './helpers/schemathesis.js';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// Schemathesis (PyPI, pinned in tools/requirements.txt) fuzzes a test hub from its own /openapi.json: any 5xx,
// any status the document does not list, an error body off its schema or an undeclared method answered other than
// 405 with Allow fails the build. A fixed seed and a few examples per operation keep each run bounded.

describe('schemathesis against the hub /openapi.json', () => {
  let hub: TestHub;
  let reportDir: string;
  let openapiUrl: string;

  before(async () => {
    hub = await startTestHub({ maxPackageBytes: 1 << 20 });
    const { db } = hub.handle;
    await insertSite(db, { id: 'lab', name: 'Lab' });
    const [rack] = await db
      .insert(racks)
      .values({ siteId: 'lab', name: 'rack-1', rackType: 'gb200_nvl72' })
      .returning();
    const inRack = { siteId: 'lab', rackId: rack!.id, credentialRef: 'bmc/default' };
    await insertDevice(db, {
      ...inRack,
      name: 'shelf-1',
      role: 'power-shelf',
      nodeType: 'powershelf_gb200_liteon',
      bmcUrl: 'http://127.0.0.1:9100',
    });
    await insertDevice(db, {
      ...inRack,
      name: 'tray-1',
      role: 'compute-tray',
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: 'http://127.0.0.1:9101',
    });
    await insertDevice(db, {
      ...inRack,
      name: 'switch-1',
      role: 'switch-tray',
      nodeType: 'switch_gb200_nvidia',
      bmcUrl: 'http://127.0.0.1:9102',
    });
    await hub.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = hub.app.server.address() as { port: number };
    openapiUrl = `http://127.0.0.1:${port}/openapi.json`;
    reportDir = await mkdtemp(join(tmpdir(), 'fleet-schemathesis-'));
  });
  after(async () => {
    await hub.close();
    await rm(reportDir, { recursive: true, force: true });
  });

  // The admin token reaches every handler; the operator token differs only where a route needs admin (403).
  const runs = [
    { role: 'admin', filters: [], least: 500 },
    { role: 'operator', filters: ['--include-by', '/x-fleet-role == "admin"'], least: 20 },
  ] as const;
  for (const { role, filters, least } of runs) {
    it(`finds no 5xx and no undocumented status with the ${role} token`, { timeout: 150_000 }, async () => {
      const started = Date.now();
      const run = await schemathesis(openapiUrl, hub.tokens[role], reportDir, role, [...filters]);
      console.log(
        `schemathesis (${role} token): ${run.requests} requests in ` +
          `${Math.round((Date.now() - started) / 1000)} s; checks: ${checks.join(', ')}`,
      );
      assert.equal(run.code, 0, run.output);
      assert.ok(run.requests >= least, `schemathesis sent only ${run.requests} requests\n${run.output}`);
    });
  }
});

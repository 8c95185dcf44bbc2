import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { distEntry } from '../../tools/lib/build-entries.js';
import { repoRoot } from '../../tools/lib/processes.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface Job {
  id: string;
  state: string;
  result: { powerState?: string } | null;
  error: { code: string; message: string } | null;
  children?: { total: number; by_state: Record<string, number> };
}

// The production build (`pnpm build`, which tools/run-tests.ts runs first for this file) across real processes: every
// process runs its dist/ bundle with plain node, the satellite its prebuilt workflow bundle.
describe('production build: a stack run from dist/', () => {
  const stack = new Stack({
    mode: 'dist',
    racks: 1,
    timeScale: 0.005,
    power: { heartbeatTimeoutS: 5, maximumAttempts: 2, settleTimeoutS: 60 },
    pollIntervalMs: 50,
  });
  before(() => stack.start(), { timeout: 180_000 });
  after(() => stack.stop(), { timeout: 60_000 });

  const computeTrays = () => stack.fleet!.devices.filter((d) => d.kind === 'compute').map((d) => d.name);
  const powerJob = async (name: string, action: string) => {
    const deviceId = stack.deviceIds.get(name)!;
    const job = expectStatus(202)(
      await stack.api('POST', `/v1/devices/${deviceId}/power`, { action }, stack.tokens.operator),
    ).body as Job;
    return (await stack.waitForJob(job.id, 120_000)) as unknown as Job;
  };

  it('runs every process from its bundle with plain node, the satellite with the build’s workflow bundle', () => {
    const entries = {
      hub: 'apps/hub/src/main.ts',
      agent: 'apps/workflow-agent/src/main.ts',
      satellite: 'apps/satellite/src/main.ts',
      simulator: 'packages/simulators/src/main.ts',
    };
    for (const [name, source] of Object.entries(entries)) {
      const proc = stack[name as keyof typeof entries];
      const argv = readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8').split('\0');
      assert.ok(argv.includes(join(repoRoot, distEntry(source))), `${name}: ${argv.join(' ')}`);
      assert.ok(!argv.some((arg) => arg.includes('tsx')), `${name} runs without tsx: ${argv.join(' ')}`);
    }
    const workflowCode = stack.satellite.output
      .split('\n')
      .filter((line) => line.includes('"msg":"workflow code"'))
      .map((line) => JSON.parse(line) as { source: string; bundle?: string });
    assert.deepEqual(workflowCode, [
      { ...workflowCode[0], source: 'the build', bundle: join(repoRoot, 'apps/satellite/dist/workflow-bundle.js') },
    ]);
  });

  it('powers the rack on through the hub, every device of it', { timeout: 180_000 }, async () => {
    const rackId = stack.rackIds.get('r001')!;
    const on = expectStatus(202)(
      await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'on' }, stack.tokens.operator),
    ).body as Job;
    const done = (await stack.waitForJob(on.id, 150_000)) as unknown as Job;
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.deepEqual(done.children, { total: 35, by_state: { succeeded: 35 } });
  });

  it('a device power job succeeds, and a BMC failure comes back as the job’s error', { timeout: 180_000 }, async () => {
    const [tray, broken] = computeTrays();
    const off = await powerJob(tray!, 'force-off');
    assert.equal(off.state, 'succeeded', JSON.stringify(off.error));
    assert.equal(off.result?.powerState, 'Off');
    const device = await stack.api('GET', `/v1/devices/${stack.deviceIds.get(tray!)}`, undefined, stack.tokens.viewer);
    assert.equal((expectStatus(200)(device).body as { power_state: string }).power_state, 'Off');

    // The satellite's typed error crosses Temporal through the failure converter the build wrote beside the bundles.
    await fetch(`${stack.simAdminUrl}/bmcs/${broken}/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ errorRate: 1, errorStatus: 500 }),
    });
    try {
      const failed = await powerJob(broken!, 'force-off');
      assert.equal(failed.state, 'failed');
      assert.match(failed.error?.message ?? '', /Internal/);
    } finally {
      await fetch(`${stack.simAdminUrl}/bmcs/${broken}/faults`, { method: 'DELETE' });
    }
  });
});

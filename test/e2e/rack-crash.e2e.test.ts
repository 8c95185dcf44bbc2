import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Stack, expectStatus } from '../harness/stack.js';

describe('satellite killed in the middle of a rack power sequence', () => {
  // Delays scaled 20×: a graceful shutdown takes 1 s, so the kill lands mid-stage.
  const stack = new Stack({
    racks: 1,
    timeScale: 0.05,
    power: { heartbeatTimeoutS: 2, settleTimeoutS: 120 },
    pollIntervalMs: 100,
  });
  before(() => stack.start(), { timeout: 180_000 });
  after(() => stack.stop(), { timeout: 60_000 });

  it('resumes at the stage it was in and repeats no completed power action', { timeout: 240_000 }, async () => {
    const rackId = stack.rackIds.get('r001')!;
    const byKind = (k: string) => stack.fleet!.devices.filter((d) => d.kind === k).map((d) => d.name);
    const resets = async (ids: string[]) => {
      let n = 0;
      const perDevice = new Map<string, number>();
      for (const id of ids) {
        const posts = (await stack.simRequests(id)).filter(
          (r) => r.method === 'POST' && r.path.endsWith('.Reset') && r.status < 300,
        ).length;
        perDevice.set(id, posts);
        n += posts;
      }
      return { n, perDevice };
    };
    // Trays start off: power the rack on first, then forget those requests.
    const on = expectStatus(202)(
      await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'on' }, stack.tokens.operator),
    ).body as { id: string };
    assert.equal(((await stack.waitForJob(on.id, 180_000)) as { state: string }).state, 'succeeded');
    for (const d of stack.fleet!.devices)
      await fetch(`${stack.simAdminUrl}/bmcs/${d.name}/requests`, { method: 'DELETE' });

    const job = expectStatus(202)(
      await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'off' }, stack.tokens.operator),
    ).body as { id: string };
    // Wait until the switch stage has begun: compute trays are done, switch trays are going down.
    const deadline = Date.now() + 120_000;
    while ((await resets(byKind('switch'))).n === 0) {
      assert.ok(Date.now() < deadline, 'the switch stage never started');
      await new Promise((r) => setTimeout(r, 50));
    }
    await stack.satellite.kill();
    await stack.startSatellite();
    const done = (await stack.waitForJob(job.id, 180_000)) as {
      state: string;
      error: unknown;
      timeline: { stages: { name: string; status: string }[] };
    };
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.deepEqual(
      done.timeline.stages.map((s) => s.status),
      ['completed', 'completed', 'completed'],
    );
    for (const kind of ['compute', 'switch', 'powershelf']) {
      const { perDevice } = await resets(byKind(kind));
      for (const [id, n] of perDevice) assert.equal(n, 1, `${id} got ${n} power requests`);
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface HealthBody {
  reachable: boolean;
  credentials_ok: boolean | null;
  faults: { class: string; component: string; severity: string }[];
  observed_at: string;
  observations: number;
}
interface DeviceBody {
  conditions: { type: string; status: string; reason: string }[];
}

/**
 * Health observation on the whole stack (docs/day2.md): the agent starts the site's observer, the satellite reads every
 * device each interval and delivers changes, the hub stores them as conditions. The redfish request timeout is 5 s
 * in the stack, so an interval of 6 s lets a BMC that stopped answering be seen within two intervals.
 */
describe('health observation of a simulated site', () => {
  const intervalS = 6;
  const stack = new Stack({ bmcs: 3, timeScale: 0.01, observe: { intervalS, confirmations: 2 } });
  const id = (i: number) => stack.deviceIds.get(stack.bmcs[i]!.id)!;
  const health = async (deviceId: string) => {
    const res = await stack.api('GET', `/v1/devices/${deviceId}/health`, undefined, stack.tokens.viewer);
    return res.status === 200 ? (res.body as HealthBody) : undefined;
  };
  const condition = async (deviceId: string, type: string) => {
    const body = expectStatus(200)(await stack.api('GET', `/v1/devices/${deviceId}`, undefined, stack.tokens.viewer))
      .body as DeviceBody;
    const c = body.conditions.find((x) => x.type === type);
    return c && `${c.status}/${c.reason}`;
  };
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.simAdminUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${await res.text()}`);
  };

  before(() => stack.start(), { timeout: 180_000 });
  after(() => stack.stop());

  it('every device is observed healthy, and a repeat reading writes nothing new', { timeout: 120_000 }, async () => {
    await waitFor(
      'every device observed',
      async () => (await Promise.all([0, 1, 2].map((i) => health(id(i))))).every((h) => h?.reachable),
      60_000,
    );
    for (const i of [0, 1, 2]) {
      assert.equal(await condition(id(i), 'Healthy'), 'True/NoFault');
      assert.equal(await condition(id(i), 'BMCReachable'), 'True/BmcAnswered');
      assert.equal(await condition(id(i), 'CredentialsVerified'), 'True/LoggedIn');
    }
    const before = (await health(id(0)))!.observed_at;
    // Two more cycles: a healthy device's unchanged reading is not delivered again.
    await new Promise((r) => setTimeout(r, 2 * intervalS * 1000 + 1000));
    assert.equal((await health(id(0)))!.observed_at, before);
  });

  it(
    'a BMC that stops answering is seen within two intervals, and again when it is back',
    { timeout: 120_000 },
    async () => {
      await admin('PUT', `/bmcs/${stack.bmcs[0]!.id}/health/unresponsive`, { mode: 'timeout' });
      const injected = Date.now();
      await waitFor(
        'BMCReachable False',
        async () => (await condition(id(0), 'BMCReachable')) === 'False/BmcUnreachable',
        60_000,
      );
      const seenAfterS = (Date.now() - injected) / 1000;
      assert.ok(seenAfterS <= 2 * intervalS + 1, `seen after ${seenAfterS} s`);
      assert.equal(await condition(id(0), 'Healthy'), 'False/BmcUnreachable');
      assert.equal(await condition(id(0), 'CredentialsVerified'), 'Unknown/BmcUnreachable');
      // Confirmed: the faulty reading is delivered at each of its first `confirmations` cycles.
      await waitFor('the fault confirmed', async () => (await health(id(0)))!.observations >= 2, 60_000);
      await admin('DELETE', `/bmcs/${stack.bmcs[0]!.id}/health/unresponsive`);
      await waitFor(
        'BMCReachable True',
        async () => (await condition(id(0), 'BMCReachable')) === 'True/BmcAnswered',
        60_000,
      );
      assert.equal(await condition(id(0), 'Healthy'), 'True/NoFault');
    },
  );

  it(
    'a GPU fallen off the bus makes the tray unhealthy, naming the GPU; clearing it heals',
    { timeout: 120_000 },
    async () => {
      await admin('POST', `/bmcs/${stack.bmcs[1]!.id}/health/faults`, { part: 'gpu', gpu: 2, offBus: true });
      await waitFor('Healthy False', async () => (await condition(id(1), 'Healthy')) === 'False/GpuFault', 60_000);
      const h = (await health(id(1)))!;
      assert.equal(h.reachable, true);
      assert.ok(
        h.faults.some((f) => f.class === 'gpu' && f.severity === 'Critical'),
        JSON.stringify(h.faults),
      );
      await admin('DELETE', `/bmcs/${stack.bmcs[1]!.id}/health/faults`);
      await waitFor('Healthy True', async () => (await condition(id(1), 'Healthy')) === 'True/NoFault', 60_000);
      // The third device never changed: its conditions never moved.
      assert.equal(await condition(id(2), 'Healthy'), 'True/NoFault');
    },
  );

  it("the observer's history grows by runs, not by samples", async () => {
    const res = await stack.api('GET', `/v1/devices/${id(2)}/history?axis=health`, undefined, stack.tokens.viewer);
    const items = (expectStatus(200)(res).body as { items: { condition_type: string | null }[] }).items;
    assert.equal(items.length, 3, 'one entry per condition of the first reading, none since');
    const d = await stack.withTemporal((c) => c.workflow.getHandle(`observer-${stack.siteId}`).describe());
    assert.equal(d.status.name, 'RUNNING');
    // Start, a first task, one activity scheduled and started: the cycles themselves are not in the history.
    assert.ok(d.historyLength <= 12, `observer history ${d.historyLength} events`);
  });
});

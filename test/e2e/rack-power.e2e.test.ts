import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Stack, expectStatus } from '../harness/stack.js';

interface Job {
  id: string;
  created_at?: string;
  state: string;
  kind: string;
  result: { refused?: unknown[] } | null;
  error: { code: string; message: string } | null;
  timeline: { currentStage: string | null; stages: { name: string; status: string; message?: string }[] } | null;
  children?: { total: number; by_state: Record<string, number> };
}
interface Logged {
  at: string;
  method: string;
  path: string;
  status: number;
  body?: { ResetType?: string };
}

// One simulated GB200 NVL72 rack (8 shelves, 9 switch trays, 18 compute trays) whose
// shelves feed the other BMCs. Simulated delays are scaled down 200×.
describe('rack power: ordered sequences, guard, batches, cold reboot', () => {
  const stack = new Stack({
    racks: 1,
    timeScale: 0.005,
    power: { heartbeatTimeoutS: 5, maximumAttempts: 2, settleTimeoutS: 60 },
    pollIntervalMs: 50,
  });
  let rackId = '';
  before(
    async () => {
      await stack.start();
      rackId = stack.rackIds.get('r001')!;
    },
    { timeout: 180_000 },
  );
  after(() => stack.stop(), { timeout: 60_000 });

  const names = (kind: string) => stack.fleet!.devices.filter((d) => d.kind === kind).map((d) => d.name);
  const powerPosts = async (ids: string[]) => {
    const out: { id: string; at: number; type?: string }[] = [];
    for (const id of ids) {
      for (const r of (await stack.simRequests(id)) as Logged[]) {
        if (r.method === 'POST' && r.path.endsWith('.Reset') && r.status < 300)
          out.push({ id, at: Date.parse(r.at), ...(r.body?.ResetType ? { type: r.body.ResetType } : {}) });
      }
    }
    return out;
  };
  const clearLogs = async () => {
    for (const d of stack.fleet!.devices)
      await fetch(`${stack.simAdminUrl}/bmcs/${d.name}/requests`, { method: 'DELETE' });
  };
  const job = async (id: string) =>
    (await stack.api('GET', `/v1/jobs/${id}`, undefined, stack.tokens.viewer)).body as Job;

  it(
    'powers the rack on in class order: shelves, then switch trays, then compute trays',
    { timeout: 180_000 },
    async () => {
      // Start from a dark rack: shelves off, so every tray BMC has lost AC.
      const off = expectStatus(202)(
        await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'off' }, stack.tokens.operator),
      ).body as Job;
      const offDone = (await stack.waitForJob(off.id, 120_000)) as unknown as Job;
      assert.equal(offDone.state, 'succeeded', JSON.stringify(offDone.error));
      assert.deepEqual(
        offDone.timeline!.stages.map((s) => [s.name, s.status]),
        [
          ['power_off_compute', 'completed'],
          ['power_off_switches', 'completed'],
          ['power_off_shelves', 'completed'],
        ],
      );
      const shelfOff = await powerPosts(names('powershelf'));
      assert.equal(shelfOff.length, 8, 'every shelf was switched off');
      await clearLogs();

      const on = expectStatus(202)(
        await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'on' }, stack.tokens.operator),
      ).body as Job;
      const done = (await stack.waitForJob(on.id, 120_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      assert.deepEqual(done.children, { total: 35, by_state: { succeeded: 35 } });
      const shelves = await powerPosts(names('powershelf'));
      const switches = await powerPosts(names('switch'));
      const compute = await powerPosts(names('compute'));
      assert.deepEqual([shelves.length, switches.length, compute.length], [8, 9, 18], 'one power request per device');
      assert.ok(
        Math.max(...shelves.map((p) => p.at)) < Math.min(...switches.map((p) => p.at)),
        'shelves before switch trays',
      );
      assert.ok(
        Math.max(...switches.map((p) => p.at)) < Math.min(...compute.map((p) => p.at)),
        'switch trays before compute trays',
      );
      const tray = (
        await stack.api(
          'GET',
          `/v1/devices/${stack.deviceIds.get(names('compute')[0]!)}`,
          undefined,
          stack.tokens.viewer,
        )
      ).body as { power_state: string };
      assert.equal(tray.power_state, 'On');
    },
  );

  it(
    'a second rack sequence on a busy rack is refused with 409, and so is a device power request on its trays',
    { timeout: 180_000 },
    async () => {
      const cycle = expectStatus(202)(
        await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'cycle' }, stack.tokens.operator),
      ).body as Job;
      const second = await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'off' }, stack.tokens.operator);
      assert.equal(second.status, 409);
      assert.match((second.body as { error: { message: string } }).error.message, /rack guard|busy/);
      const device = await stack.api(
        'POST',
        `/v1/devices/${stack.deviceIds.get(names('compute')[3]!)}/power`,
        { action: 'off' },
        stack.tokens.operator,
      );
      assert.equal(device.status, 409);
      const done = (await stack.waitForJob(cycle.id, 150_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      assert.equal(done.timeline!.stages.length, 6);
    },
  );

  it('a batch with failing BMCs reports per-device results and the RMS aggregate', { timeout: 180_000 }, async () => {
    const broken = names('compute').slice(0, 2);
    for (const id of broken) {
      await fetch(`${stack.simAdminUrl}/bmcs/${id}/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ errorRate: 1, errorStatus: 500 }),
      });
    }
    try {
      // Cycling the shelves with the trays they feed would cut the trays' AC mid-cycle: refused.
      const whole = await stack.api(
        'POST',
        '/v1/power-batches',
        { rack_id: rackId, action: 'power-cycle' },
        stack.tokens.operator,
      );
      assert.equal(whole.status, 409);
      assert.match(
        (whole.body as { error: { message: string } }).error.message,
        /power shelves and the trays they feed/,
      );
      const trays = { rack_id: [rackId], role: ['compute-tray', 'nvlink-switch-tray'] };
      const batch = expectStatus(202)(
        await stack.api('POST', '/v1/power-batches', { filter: trays, action: 'power-cycle' }, stack.tokens.operator),
      ).body as Job;
      assert.equal(batch.kind, 'batch.power');
      const done = (await stack.waitForJob(batch.id, 150_000)) as unknown as Job;
      assert.equal(done.state, 'failed');
      assert.equal(done.error!.message, 'Batch complete: 25/27 succeeded, 2 failed');
      assert.deepEqual(done.children, { total: 27, by_state: { succeeded: 25, failed: 2 } });
      const failedChildren = (
        await stack.api('GET', `/v1/jobs?parent_id=${batch.id}&state=failed`, undefined, stack.tokens.viewer)
      ).body as { items: { target: { device_id: string }; error: { message: string } }[] };
      assert.deepEqual(
        failedChildren.items.map((c) => c.target.device_id).sort(),
        broken.map((n) => stack.deviceIds.get(n)!).sort(),
      );
      assert.ok(failedChildren.items.every((c) => /Internal/.test(c.error.message)));
    } finally {
      for (const id of broken) await fetch(`${stack.simAdminUrl}/bmcs/${id}/faults`, { method: 'DELETE' });
    }
  });

  it('a cancelled cold reboot stops at a stage boundary: later stages never run', { timeout: 180_000 }, async () => {
    // A long discharge floor keeps the reboot waiting in verify_discharged.
    const timings = {
      dischargeFloorS: 600,
      pollIntervalS: 1,
      bmcUpFloorS: 1,
      computeBootWaitS: 1,
      prestageShutdownPollMaxS: 60,
    };
    const reboot = expectStatus(202)(
      await stack.api('POST', `/v1/racks/${rackId}/cold-reboot`, { timings }, stack.tokens.operator),
    ).body as Job;
    const deadline = Date.now() + 120_000;
    while ((await job(reboot.id)).timeline?.currentStage !== 'verify_discharged') {
      assert.ok(Date.now() < deadline, 'never reached verify_discharged');
      await new Promise((r) => setTimeout(r, 200));
    }
    await clearLogs();
    expectStatus(202)(await stack.api('POST', `/v1/jobs/${reboot.id}/cancel`, undefined, stack.tokens.operator));
    const done = (await stack.waitForJob(reboot.id, 60_000)) as unknown as Job;
    assert.equal(done.state, 'cancelled');
    const status = Object.fromEntries(done.timeline!.stages.map((s) => [s.name, s.status]));
    assert.deepEqual(status, {
      prestage_shutdown_compute: 'completed',
      prestage_verify_compute_down: 'completed',
      power_off_shelves: 'completed',
      verify_discharged: 'cancelled',
      power_on_shelves: 'queued',
      verify_bmc_up: 'queued',
      verify_nvos_ready: 'queued',
      power_on_compute: 'queued',
      wait_compute_boot: 'queued',
    });
    assert.equal((await powerPosts(names('powershelf'))).length, 0, 'the shelves were not switched back on');
    assert.equal(
      done.children!.by_state['cancelled'],
      35,
      `every child ended, freeing the devices: ${JSON.stringify(done.children)}`,
    );
  });

  it(
    'a full cold reboot runs every stage, fail-fast gates satisfied, and the rack comes back',
    { timeout: 240_000 },
    async () => {
      // The cancelled reboot left the shelves off; a reboot starts from a powered rack.
      const on = expectStatus(202)(
        await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'on' }, stack.tokens.operator),
      ).body as Job;
      assert.equal(((await stack.waitForJob(on.id, 120_000)) as unknown as Job).state, 'succeeded');
      const timings = {
        dischargeFloorS: 1,
        pollIntervalS: 1,
        bmcUpFloorS: 1,
        computeBootWaitS: 1,
        prestageShutdownPollMaxS: 60,
        dischargePollMaxS: 60,
        bmcUpPollMaxS: 60,
      };
      const reboot = expectStatus(202)(
        await stack.api('POST', `/v1/racks/${rackId}/cold-reboot`, { timings }, stack.tokens.operator),
      ).body as Job;
      const done = (await stack.waitForJob(reboot.id, 200_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      assert.deepEqual(
        done.timeline!.stages.map((s) => s.status),
        [
          'completed',
          'completed',
          'completed',
          'completed',
          'completed',
          'completed',
          'skipped',
          'completed',
          'completed',
        ],
      );
      assert.deepEqual(done.children, { total: 35, by_state: { succeeded: 35 } });
    },
  );

  it(
    'resets a compute tray HMC once and waits for it; a power refresh records what the BMC says',
    { timeout: 120_000 },
    async () => {
      const tray = names('compute')[5]!;
      const id = stack.deviceIds.get(tray)!;
      await fetch(`${stack.simAdminUrl}/bmcs/${tray}/requests`, { method: 'DELETE' });
      const reset = expectStatus(202)(
        await stack.api('POST', `/v1/devices/${id}/bmc-reset`, { manager: 'hmc' }, stack.tokens.operator),
      ).body as Job;
      const done = (await stack.waitForJob(reset.id, 60_000)) as unknown as Job & {
        result: { manager: string; outageSeen: boolean };
      };
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      assert.equal(done.result.manager, 'hmc');
      const resets = ((await stack.simRequests(tray)) as Logged[]).filter(
        (r) => r.method === 'POST' && r.path.includes('/Managers/'),
      );
      assert.deepEqual(
        resets.map((r) => r.path),
        ['/redfish/v1/Managers/HGX_BMC_0/Actions/Manager.Reset'],
      );
      const shelf = await stack.api(
        'POST',
        `/v1/devices/${stack.deviceIds.get(names('powershelf')[0]!)}/bmc-reset`,
        { manager: 'hmc' },
        stack.tokens.operator,
      );
      assert.equal(shelf.status, 400);

      const refresh = expectStatus(202)(
        await stack.api('POST', `/v1/devices/${id}/power-refresh`, undefined, stack.tokens.operator),
      ).body as Job;
      assert.equal(((await stack.waitForJob(refresh.id, 60_000)) as unknown as Job).state, 'succeeded');
      const device = (await stack.api('GET', `/v1/devices/${id}`, undefined, stack.tokens.viewer)).body as {
        power_state: string;
        power_state_at: string;
      };
      assert.equal(device.power_state, 'On');
      assert.ok(Date.parse(device.power_state_at) >= Date.parse(refresh.created_at ?? '1970-01-01'));
    },
  );
});

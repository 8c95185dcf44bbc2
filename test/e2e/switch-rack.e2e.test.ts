import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setSwitchFaults } from '../harness/switches.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface Job {
  id: string;
  state: string;
  error: { code: string; message: string; details?: { stage?: string; devices?: string[] } } | null;
  timeline: { stages: { name: string; status: string; message?: string }[] } | null;
}

/**
 * The dev stack's credentials: every BMC and every switch logs in with one password, so one shared reference works for
 * all.
 */
class SharedPasswordStack extends Stack {
  override readonly switchPassword = this.bmcPassword;
}

// One simulated NVL72 rack whose 9 switch trays' NVOS runs on the NVOS simulator, mirrored the way NetBox gives it:
// NVUE and SSH endpoints, no NVOS credential reference of their own (so they log in with bmc/default, like the BMCs).
describe(`switch trays of a rack: NVOS readiness in the cold reboot, password rotation beside shared \
references`, () => {
  // An NVUE request timeout longer than the heartbeat timeout, as in production (30 s against 30 s, plus the connect).
  const stack = new SharedPasswordStack({
    racks: 1,
    switches: 9,
    timeScale: 0.005,
    power: { heartbeatTimeoutS: 5, maximumAttempts: 2, settleTimeoutS: 60 },
    pollIntervalMs: 50,
    nvos: { requestTimeoutMs: 8_000 },
  });
  let rackId = '';
  let trays: string[] = [];
  let compute = '';
  before(
    async () => {
      await stack.start();
      rackId = stack.rackIds.get('r001')!;
      trays = stack
        .fleet!.devices.filter((d) => d.kind === 'switch')
        .map((d) => d.name)
        .sort();
      assert.equal(trays.length, stack.switches.length);
      for (const [i, name] of trays.entries()) {
        const sw = stack.switches[i]!;
        await stack.dbHandle.pool.query('update devices set nvos_url = $1, nvos_ssh = $2 where name = $3', [
          sw.nvueUrl,
          `${sw.ssh.host}:${sw.ssh.port}`,
          name,
        ]);
      }
      compute = stack.deviceIds.get(stack.fleet!.devices.find((d) => d.kind === 'compute')!.name)!;
    },
    { timeout: 180_000 },
  );
  after(() => stack.stop(), { timeout: 60_000 });

  const fast = {
    dischargeFloorS: 1,
    pollIntervalS: 1,
    bmcUpFloorS: 1,
    computeBootWaitS: 1,
    prestageShutdownPollMaxS: 60,
    dischargePollMaxS: 60,
    bmcUpPollMaxS: 60,
    nvosHelloBackoffS: 1,
  };
  const coldReboot = async (timings: Record<string, number>) => {
    const started = expectStatus(202)(
      await stack.api('POST', `/v1/racks/${rackId}/cold-reboot`, { timings }, stack.tokens.operator),
    ).body as Job;
    return (await stack.waitForJob(started.id, 200_000)) as unknown as Job;
  };
  const stage = (job: Job, name: string) => job.timeline!.stages.find((s) => s.name === name)!;
  const hellos = async (sw: string) =>
    (
      (await (await fetch(`${stack.simAdminUrl}/switches/${sw}/requests`)).json()) as {
        items: { method: string; path: string }[];
      }
    ).items.filter((r) => r.method === 'GET' && r.path === '/nvue_v1/system').length;
  const power = async (action: string) => {
    const res = expectStatus(202)(
      await stack.api('POST', `/v1/devices/${compute}/power`, { action }, stack.tokens.operator),
    ).body as Job;
    return (await stack.waitForJob(res.id, 60_000)) as unknown as Job;
  };
  const secrets = () =>
    JSON.parse(readFileSync(join(stack.dir, 'secrets.json'), 'utf8')) as Record<
      string,
      { username: string; password: string }
    >;

  it(
    'verify_nvos_ready asks NVUE on every switch tray and completes once all answer',
    { timeout: 240_000 },
    async () => {
      const before = await Promise.all(stack.switches.map((s) => hellos(s.id)));
      const done = await coldReboot(fast);
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
          'completed',
          'completed',
          'completed',
        ],
      );
      assert.equal(stage(done, 'verify_nvos_ready').message, '9 switch trays answer NVUE');
      const after = await Promise.all(stack.switches.map((s) => hellos(s.id)));
      assert.ok(
        after.every((n, i) => n > before[i]!),
        `every switch was asked: ${before} → ${after}`,
      );
    },
  );

  it(
    'a switch tray whose NVUE never answers fails verify_nvos_ready naming it, after the attempts and their backoff',
    { timeout: 240_000 },
    async () => {
      const silent = stack.deviceIds.get(trays[2]!)!;
      await setSwitchFaults(stack, stack.switches[2]!.id, { nvueUnavailable: true });
      const startedAt = Date.now();
      const done = await coldReboot({ ...fast, nvosHelloAttempts: 3 }).finally(() =>
        setSwitchFaults(stack, stack.switches[2]!.id, {}),
      );
      assert.equal(done.state, 'failed');
      assert.equal(done.error!.code, 'STAGE_FAILED');
      assert.match(
        done.error!.message,
        new RegExp(
          `^verify_nvos_ready: 1/9 switch trays did not answer NVUE after 3 attempts over 3s: ${silent} ` +
            `\\(UNAVAILABLE: `,
        ),
      );
      assert.deepEqual(done.error!.details, { stage: 'verify_nvos_ready', devices: [silent] });
      assert.ok(Date.now() - startedAt >= 3_000, 'the backoff (1 s, then 2 s) was waited');
      assert.equal(stage(done, 'verify_nvos_ready').status, 'failed');
      assert.notEqual(stage(done, 'power_on_compute').status, 'completed', 'compute trays were not powered on');
    },
  );

  it(
    'a switch tray whose NVUE accepts the connection and never answers fails verify_nvos_ready naming it, ' +
      'not the job as a whole',
    { timeout: 240_000 },
    async () => {
      const hung = stack.deviceIds.get(trays[4]!)!;
      await setSwitchFaults(stack, stack.switches[4]!.id, { hang: true });
      const done = await coldReboot({ ...fast, nvosHelloAttempts: 2 }).finally(() =>
        setSwitchFaults(stack, stack.switches[4]!.id, {}),
      );
      assert.equal(done.state, 'failed');
      assert.equal(done.error!.code, 'STAGE_FAILED', JSON.stringify(done.error));
      assert.match(done.error!.message, new RegExp(`^verify_nvos_ready: 1/9 switch trays .*${hung}`));
      assert.deepEqual(done.error!.details, { stage: 'verify_nvos_ready', devices: [hung] });
      assert.equal(stage(done, 'verify_nvos_ready').status, 'failed');
      assert.notEqual(stage(done, 'power_on_compute').status, 'completed', 'compute trays were not powered on');
    },
  );

  it(
    'rotating a switch whose NVOS reference is shared is refused; the compute trays sharing it still ' +
      'power; with its own reference it rotates',
    { timeout: 240_000 },
    async () => {
      const tray = stack.deviceIds.get(trays[0]!)!;
      // Falls back to the BMC reference every tray of the rack uses.
      const fallback = await stack.api(
        'POST',
        `/v1/devices/${tray}/nvos-password-rotation`,
        undefined,
        stack.tokens.admin,
      );
      assert.equal(fallback.status, 409, JSON.stringify(fallback.body));
      assert.match(
        (fallback.body as { error: { message: string } }).error.message,
        new RegExp(
          /no NVOS credential reference of its own \(it logs in with its BMC's, bmc\/default\); /.source +
            /.*fleet_nvos_credential_ref/.source,
        ),
      );
      // nvos/default is the NVOS reference of every switch the stack registered by hand.
      const shared = await stack.api(
        'POST',
        `/v1/devices/${stack.deviceIds.get(stack.switches[0]!.id)}/nvos-password-rotation`,
        undefined,
        stack.tokens.admin,
      );
      assert.equal(shared.status, 409, JSON.stringify(shared.body));
      assert.match(
        (shared.body as { error: { message: string } }).error.message,
        /nvos\/default .* is also used by the NVOS of /,
      );

      assert.equal((await power('on')).state, 'succeeded', 'the compute tray still logs in with bmc/default');
      assert.deepEqual(secrets()['bmc/default'], { username: 'admin', password: stack.bmcPassword });

      // Its own reference: a secret of its own in the satellite's store, named in the inventory.
      const own = `nvos/${trays[0]}`;
      writeFileSync(
        join(stack.dir, 'secrets.json'),
        JSON.stringify({ ...secrets(), [own]: { username: 'admin', password: stack.bmcPassword } }),
        { mode: 0o600 },
      );
      await stack.dbHandle.pool.query('update devices set nvos_credential_ref = $1 where id = $2', [own, tray]);
      const rotation = expectStatus(202)(
        await stack.api('POST', `/v1/devices/${tray}/nvos-password-rotation`, undefined, stack.tokens.admin),
      ).body as Job;
      const rotated = (await stack.waitForJob(rotation.id, 60_000)) as unknown as Job;
      assert.equal(rotated.state, 'succeeded', JSON.stringify(rotated.error));
      const after = secrets();
      assert.notEqual(after[own]!.password, stack.bmcPassword, 'the switch has a new password under its own reference');
      assert.deepEqual(
        after['bmc/default'],
        { username: 'admin', password: stack.bmcPassword },
        'the shared BMC secret is untouched',
      );
      assert.equal((await power('force-off')).state, 'succeeded', 'the compute tray still logs in with bmc/default');
    },
  );
});

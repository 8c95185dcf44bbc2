import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Stack, expectStatus } from '../harness/stack.js';

interface Job {
  id: string;
  kind: string;
  state: string;
  result: Record<string, unknown> | null;
  error: { code: string; message: string; details?: Record<string, unknown> } | null;
}
type Secrets = Record<string, { username: string; password: string }>;

// One simulated NVL72 rack (35 BMCs). Mirrored as NetBox gives it, every device logs in with bmc/default: a rotation
// is refused until each device has a reference of its own, then rotates them all; a BMC that takes a new password but
// refuses logins with it is rolled back. No new password reaches Postgres, Temporal or a log.
describe('BMC credential rotation over a simulated rack', () => {
  const stack = new Stack({ racks: 1, timeScale: 0.005, power: { heartbeatTimeoutS: 10, maximumAttempts: 3 } });
  let rackId = '';
  let names: string[] = [];
  const secretsFile = () => join(stack.dir, 'secrets.json');
  const secrets = () => JSON.parse(readFileSync(secretsFile(), 'utf8')) as Secrets;
  const newPasswords = new Set<string>();
  before(
    async () => {
      await stack.start();
      rackId = stack.rackIds.get('r001')!;
      names = stack.fleet!.devices.map((d) => d.name).sort();
    },
    { timeout: 180_000 },
  );
  after(() => stack.stop(), { timeout: 60_000 });

  const logsIn = async (name: string, password: string) => {
    const bmc = stack.bmcs.find((b) => b.id === name)!;
    const res = await fetch(`${bmc.url}/redfish/v1/AccountService`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` },
    });
    return res.status === 200;
  };
  const rotateRack = (body: unknown) =>
    stack.api('POST', `/v1/racks/${rackId}/bmc-password-rotation`, body, stack.tokens.admin);

  it('refuses (409) a rotation while devices share a BMC reference, naming them; operators may not ask', async () => {
    const refused = (
      expectStatus(409)(await rotateRack({ concurrency: 8 })).body as {
        error: { message: string; details: { issue: string }[] };
      }
    ).error;
    assert.match(refused.message, /35 devices log in with a BMC credential reference that is not their own/);
    assert.equal(refused.details.length, 35);
    for (const name of names)
      assert.ok(
        refused.details.some((d) => d.issue.includes(`device ${name} `)),
        name,
      );
    const one = stack.deviceIds.get(names[0]!)!;
    const single = (
      expectStatus(409)(
        await stack.api('POST', `/v1/devices/${one}/bmc-password-rotation`, undefined, stack.tokens.admin),
      ).body as { error: { message: string } }
    ).error;
    assert.match(single.message, /bmc\/default .* is also used by the BMC of /);
    expectStatus(403)(await stack.api('POST', `/v1/racks/${rackId}/bmc-password-rotation`, {}, stack.tokens.operator));
    expectStatus(400)(await rotateRack({ concurrency: 0 }));
  });

  it('rotates every BMC of the rack, a few at a time, each into its own reference', async () => {
    // Each device its own reference, the site's store holding the password the BMC has now.
    const all = secrets();
    for (const name of names) {
      all[`bmc/${name}`] = { username: 'admin', password: stack.bmcPassword };
      await stack.dbHandle.pool.query('update devices set credential_ref = $1 where name = $2', [`bmc/${name}`, name]);
    }
    writeFileSync(secretsFile(), JSON.stringify(all), { mode: 0o600 });

    const started = expectStatus(202)(await rotateRack({ concurrency: 8 })).body as Job;
    assert.equal(started.kind, 'rack.bmc_password_rotation');
    const done = (await stack.waitForJob(started.id, 240_000)) as unknown as Job;
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.deepEqual(done.result, { devices: 35, rotated: 35, failed: 0 });

    const children = (
      await stack.dbHandle.pool.query<{ kind: string; state: string }>(
        'select kind, state from jobs where parent_id = $1',
        [started.id],
      )
    ).rows;
    assert.equal(children.length, 35);
    assert.ok(children.every((c) => c.kind === 'bmc.password_rotation' && c.state === 'succeeded'));

    const now = secrets();
    for (const name of names) {
      const next = now[`bmc/${name}`]!.password;
      assert.notEqual(next, stack.bmcPassword);
      newPasswords.add(next);
      assert.deepEqual(now[`bmc/${name}#previous`], { username: 'admin', password: stack.bmcPassword });
      assert.equal(now[`bmc/${name}#next`], undefined);
    }
    assert.equal(newPasswords.size, 35, 'every BMC has a password of its own');
    const sample = names[3]!;
    assert.equal(await logsIn(sample, now[`bmc/${sample}`]!.password), true);
    assert.equal(await logsIn(sample, stack.bmcPassword), false);
  });

  it('rolls a BMC back when it takes the new password but refuses logins with it', async () => {
    const name = names[0]!;
    const before = secrets()[`bmc/${name}`]!;
    const fault = await fetch(`${stack.simAdminUrl}/bmcs/${name}/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refuseNewPassword: true }),
    });
    assert.equal(fault.status, 200);
    const id = stack.deviceIds.get(name)!;
    const started = expectStatus(202)(
      await stack.api('POST', `/v1/devices/${id}/bmc-password-rotation`, undefined, stack.tokens.admin),
    ).body as Job;
    assert.equal(started.kind, 'bmc.password_rotation');
    const done = (await stack.waitForJob(started.id, 120_000)) as unknown as Job;
    assert.equal(done.state, 'failed');
    assert.equal(done.error?.code, 'VERIFICATION_FAILED');
    assert.match(done.error!.message, /refused a login with it; rolled back/);

    await fetch(`${stack.simAdminUrl}/bmcs/${name}/faults`, { method: 'DELETE' });
    const after = secrets();
    assert.deepEqual(after[`bmc/${name}`], before, 'the store holds the old password');
    assert.equal(after[`bmc/${name}#next`], undefined);
    assert.equal(await logsIn(name, before.password), true, 'the old password still logs in');
    const patches = (await stack.simRequests(name)).filter((r) => r.method === 'PATCH');
    assert.equal(patches.length, 3, 'the first rotation, then the new password and the old one again');
  });

  it('no new password reaches Postgres, Temporal history or any log', async () => {
    // The stack's leak scan: decoded histories, a pg_dump and every log, for these and every secret it holds.
    const report = await stack.scanForLeaks(
      [...newPasswords].map((value, i) => ({ name: `new password ${i}`, value })),
    );
    assert.deepEqual(report.findings, []);
    assert.ok(report.histories >= 2 && report.payloads > 0 && report.logBytes > 0 && report.pgDumpBytes > 0);
  });
});

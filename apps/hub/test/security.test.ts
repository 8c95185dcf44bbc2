import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  AUDIT_GENESIS_HASH,
  AuditChainVerifier,
  auditChainHead,
  createApiToken,
  insertDevice,
  insertSite,
  jobs,
  racks,
  setLifecycle,
  type AuditChainRecord,
} from '@fleet/db';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

const hubDir = fileURLToPath(new URL('..', import.meta.url));

/** Runs audit-cli; answers its exit code and the JSON it printed. */
const auditCli = (...args: string[]) =>
  new Promise<{ code: number | null; out: Record<string, unknown> | undefined; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/audit-cli.ts', 'verify-audit', ...args], {
      cwd: hubDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => {
      let out: Record<string, unknown> | undefined;
      try {
        out = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        out = undefined;
      }
      resolve({ code, out, stderr });
    });
  });

// docs/security.md: the audit log's export and verification outside the database, and the two-person rules.
describe('hub security: audit export and verification, two-person rules', () => {
  let hub: TestHub;
  let dir: string;
  let admin2 = '';
  let operator2 = '';
  let switchId = '';
  let rackId = '';
  let fullRackId = '';
  let quarantinedId = '';

  const call = (method: 'GET' | 'POST', url: string, token: string, body?: object) =>
    hub.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body ? { payload: body } : {}),
    });

  before(async () => {
    hub = await startTestHub({
      twoPerson: {
        rules: {
          'campaign.approve': true,
          'switch.factory_reset': true,
          'rack.power_off': true,
          'rack.cold_reboot': true,
          'batch.power_off': true,
          'device.release': true,
        },
        approvalTtlS: 3600,
      },
    });
    dir = await mkdtemp(join(tmpdir(), 'fleet-security-'));
    admin2 = (await createApiToken(hub.handle.db, 't-admin-2', 'admin')).token;
    operator2 = (await createApiToken(hub.handle.db, 't-operator-2', 'operator')).token;
    await insertSite(hub.handle.db, { id: 'sec', name: 'Security' });
    const created = await call('POST', '/v1/devices', hub.tokens.admin, {
      name: 'sw-1',
      site_id: 'sec',
      node_type: 'switch_gb200_nvidia',
      bmc_url: 'https://10.0.0.4',
      credential_ref: 'bmc/sw',
      nvos_url: 'https://10.0.0.5',
      nvos_ssh: '10.0.0.5:22',
    });
    assert.equal(created.statusCode, 201, created.body);
    switchId = created.json().id;
    const [rack] = await hub.handle.db
      .insert(racks)
      .values({ siteId: 'sec', name: 'r1', rackType: 'gb200_nvl72' })
      .returning();
    rackId = rack!.id;
    const add = (name: string, rack: string | null, nodeType = 'compute_gb200_nvidia') =>
      insertDevice(hub.handle.db, {
        name,
        siteId: 'sec',
        rackId: rack,
        nodeType,
        bmcUrl: 'http://127.0.0.1:9000',
        credentialRef: 'bmc/default',
      });
    await add('tray-1', rackId);
    const [full] = await hub.handle.db
      .insert(racks)
      .values({ siteId: 'sec', name: 'r2', rackType: 'gb200_nvl72' })
      .returning();
    fullRackId = full!.id;
    await add('r2-shelf', fullRackId, 'powershelf_gb200_liteon');
    await add('r2-switch', fullRackId, 'switch_gb200_nvidia');
    await add('r2-tray', fullRackId);
    quarantinedId = (await add('held-1', null)).id;
    await setLifecycle(hub.handle.db, {
      deviceId: quarantinedId,
      to: 'quarantined',
      writer: 'lifecycle-workflow',
      jobId: randomUUID(),
      reason: 'OperatorQuarantine',
      message: 'suspect',
    });
  });
  after(async () => {
    await hub.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('two-person rules', () => {
    let resetApproval = '';

    it('holds an NVOS factory reset: 202 with a pending approval, listed, no job', async () => {
      const res = await call('POST', `/v1/devices/${switchId}/nvos-factory-reset`, hub.tokens.admin, {
        confirm: 'sw-1',
      });
      assert.equal(res.statusCode, 202, res.body);
      const body = res.json();
      resetApproval = body.id;
      assert.equal(res.headers.location, `/v1/approvals/${body.id}`);
      assert.deepEqual(
        [body.rule, body.job_kind, body.target, body.state, body.requested_by, body.job_id],
        ['switch.factory_reset', 'switch.factory_reset', `device/${switchId}`, 'pending', 't-admin', null],
      );
      const jobsNow = await hub.handle.db.select().from(jobs);
      assert.equal(jobsNow.length, 0);
      const list = await call('GET', '/v1/approvals', hub.tokens.viewer);
      assert.deepEqual(
        list.json().items.map((a: { id: string }) => a.id),
        [resetApproval],
      );
      // The request is checked before it is held.
      const wrong = await call('POST', `/v1/devices/${switchId}/nvos-factory-reset`, hub.tokens.admin, {
        confirm: 'nope',
      });
      assert.equal(wrong.statusCode, 400);
    });

    it('the requester cannot approve their own request, nor a person without the job kind’s role', async () => {
      const own = await call('POST', `/v1/approvals/${resetApproval}/approve`, hub.tokens.admin, { reason: 'me' });
      assert.equal(own.statusCode, 403, own.body);
      assert.match(own.json().error.message, /two-person rule switch\.factory_reset/);
      const low = await call('POST', `/v1/approvals/${resetApproval}/approve`, hub.tokens.operator, { reason: 'x' });
      assert.equal(low.statusCode, 403);
      assert.match(low.json().error.message, /needs the admin role/);
    });

    it('approval checks the request again: a busy device is a 409 and the approval stays pending', async () => {
      const [busy] = await hub.handle.db
        .insert(jobs)
        .values({ kind: 'device.power', state: 'running', deviceId: switchId, params: {}, createdBy: 'x' })
        .returning();
      const res = await call('POST', `/v1/approvals/${resetApproval}/approve`, admin2, { reason: 'go' });
      assert.equal(res.statusCode, 409, res.body);
      assert.equal((await call('GET', `/v1/approvals/${resetApproval}`, hub.tokens.viewer)).json().state, 'pending');
      await hub.handle.pool.query("update jobs set state = 'succeeded' where id = $1", [busy!.id]);
    });

    it("a second person's approval writes the job (by the requester), its intent and both audit rows", async () => {
      const res = await call('POST', `/v1/approvals/${resetApproval}/approve`, admin2, { reason: 'checked' });
      assert.equal(res.statusCode, 202, res.body);
      const job = res.json();
      assert.equal(res.headers.location, `/v1/jobs/${job.id}`);
      assert.deepEqual([job.kind, job.created_by], ['switch.factory_reset', 't-admin']);
      const intents = await hub.handle.pool.query('select kind from intents where job_id = $1', [job.id]);
      assert.deepEqual(intents.rows, [{ kind: 'start' }]);
      const approval = (await call('GET', `/v1/approvals/${resetApproval}`, hub.tokens.viewer)).json();
      assert.deepEqual(
        [approval.state, approval.decided_by, approval.decision_reason, approval.job_id],
        ['approved', 't-admin-2', 'checked', job.id],
      );
      const audit = await hub.handle.pool.query(
        `select actor, action, target, job_id from audit_log where target = $1 or job_id = $2 order by id`,
        [`approval/${resetApproval}`, job.id],
      );
      assert.deepEqual(
        audit.rows.map((r) => [r.actor, r.action]),
        [
          ['t-admin', 'approval.request'],
          ['t-admin-2', 'switch.factory_reset'],
          ['t-admin-2', 'approval.approve'],
        ],
      );
      const again = await call('POST', `/v1/approvals/${resetApproval}/approve`, operator2, { reason: 'x' });
      assert.equal(again.statusCode, 409);
      assert.equal((await call('GET', '/v1/approvals', hub.tokens.viewer)).json().items.length, 0);
    });

    it('rack power off is held, on is not; a rejection makes no job and closes the approval', async () => {
      const on = await call('POST', `/v1/racks/${rackId}/power`, hub.tokens.operator, { op: 'on' });
      assert.equal(on.statusCode, 202, on.body);
      assert.equal(on.json().kind, 'rack.power');
      await hub.handle.pool.query("update jobs set state = 'succeeded' where state in ('queued', 'running')");
      const off = await call('POST', `/v1/racks/${rackId}/power`, hub.tokens.operator, { op: 'off' });
      assert.equal(off.statusCode, 202, off.body);
      const approval = off.json();
      assert.deepEqual([approval.rule, approval.input.op], ['rack.power_off', 'off']);
      const before = (await hub.handle.db.select().from(jobs)).length;
      const rejected = await call('POST', `/v1/approvals/${approval.id}/reject`, operator2, { reason: 'not now' });
      assert.equal(rejected.statusCode, 200, rejected.body);
      assert.deepEqual([rejected.json().state, rejected.json().decided_by], ['rejected', 't-operator-2']);
      assert.equal((await hub.handle.db.select().from(jobs)).length, before);
      const late = await call('POST', `/v1/approvals/${approval.id}/approve`, operator2, { reason: 'changed mind' });
      assert.equal(late.statusCode, 409);
      const audit = await hub.handle.pool.query("select actor from audit_log where action = 'approval.reject'");
      assert.deepEqual(audit.rows, [{ actor: 't-operator-2' }]);
      // Asked again and approved: the rack sequence with its child, as a direct request makes it.
      const again = await call('POST', `/v1/racks/${rackId}/power`, hub.tokens.operator, { op: 'off' });
      const job = await call('POST', `/v1/approvals/${again.json().id}/approve`, operator2, { reason: 'window' });
      assert.equal(job.statusCode, 202, job.body);
      assert.deepEqual(
        [job.json().kind, job.json().params, job.json().created_by],
        ['rack.power', { op: 'off' }, 't-operator'],
      );
      const children = await hub.handle.pool.query('select kind from jobs where parent_id = $1', [job.json().id]);
      assert.equal(children.rowCount, 1);
    });

    it('a power batch that takes hosts down is held, on is not; approved, it selects the devices again', async () => {
      await hub.handle.pool.query("update jobs set state = 'succeeded' where state in ('queued', 'running')");
      const on = await call('POST', '/v1/power-batches', hub.tokens.operator, { action: 'on', rack_id: rackId });
      assert.equal(on.statusCode, 202, on.body);
      assert.equal(on.json().kind, 'batch.power');
      await hub.handle.pool.query("update jobs set state = 'succeeded' where state in ('queued', 'running')");
      // A batch off over a rack's trays is the rack power-off without its order: the same second person.
      const off = await call('POST', '/v1/power-batches', hub.tokens.operator, {
        action: 'force-off',
        rack_id: rackId,
      });
      assert.equal(off.statusCode, 202, off.body);
      const approval = off.json();
      assert.deepEqual(
        [approval.rule, approval.state, approval.input.action, approval.target],
        ['batch.power_off', 'pending', 'force-off', `rack/${rackId}`],
      );
      const own = await call('POST', `/v1/approvals/${approval.id}/approve`, hub.tokens.operator, { reason: 'me' });
      assert.equal(own.statusCode, 403, own.body);
      // A tray joins the rack while the batch waits: the approved batch acts on what the rack holds then.
      await insertDevice(hub.handle.db, {
        name: 'tray-late',
        siteId: 'sec',
        rackId,
        nodeType: 'compute_gb200_nvidia',
        bmcUrl: 'http://127.0.0.1:9000',
        credentialRef: 'bmc/default',
      });
      const job = await call('POST', `/v1/approvals/${approval.id}/approve`, operator2, { reason: 'window' });
      assert.equal(job.statusCode, 202, job.body);
      assert.deepEqual(
        [job.json().kind, job.json().params.action, job.json().created_by],
        ['batch.power', 'force-off', 't-operator'],
      );
      const children = await hub.handle.pool.query('select count(*)::int as n from jobs where parent_id = $1', [
        job.json().id,
      ]);
      assert.equal(children.rows[0].n, 2, 'tray-1 and the tray that joined');
    });

    it('a cold reboot is checked, then held; a quarantine release is held and expires unapproved', async () => {
      const incomplete = await call('POST', `/v1/racks/${rackId}/cold-reboot`, hub.tokens.operator, {});
      assert.equal(incomplete.statusCode, 409, 'the rack has no power shelf: checked before the request is held');
      const cold = await call('POST', `/v1/racks/${fullRackId}/cold-reboot`, hub.tokens.operator, {});
      assert.equal(cold.statusCode, 202, cold.body);
      assert.deepEqual([cold.json().rule, cold.json().state], ['rack.cold_reboot', 'pending']);
      const release = await call('POST', `/v1/devices/${quarantinedId}/release`, hub.tokens.operator, {
        reason: 'fixed',
      });
      assert.equal(release.statusCode, 202, release.body);
      const approval = release.json();
      assert.equal(approval.rule, 'device.release');
      await hub.handle.pool.query("update approvals set expires_at = now() - interval '1 second' where id = $1", [
        approval.id,
      ]);
      assert.equal((await call('GET', `/v1/approvals/${approval.id}`, hub.tokens.viewer)).json().state, 'expired');
      assert.deepEqual(
        (await call('GET', '/v1/approvals', hub.tokens.viewer)).json().items.map((a: { id: string }) => a.id),
        [cold.json().id],
        'an expired approval is no longer listed',
      );
      const res = await call('POST', `/v1/approvals/${approval.id}/approve`, operator2, { reason: 'late' });
      assert.equal(res.statusCode, 409);
      assert.match(res.json().error.message, /expired/);
    });

    it("a campaign's creator cannot approve its rollout; another person can", async () => {
      const [campaign] = await hub.handle.db
        .insert(jobs)
        .values({ kind: 'firmware.campaign', state: 'running', siteId: 'sec', params: {}, createdBy: 't-operator' })
        .returning();
      const own = await call('POST', `/v1/firmware-campaigns/${campaign!.id}/approve`, hub.tokens.operator);
      assert.equal(own.statusCode, 403, own.body);
      assert.match(own.json().error.message, /two-person rule campaign\.approve: t-operator created/);
      const other = await call('POST', `/v1/firmware-campaigns/${campaign!.id}/approve`, operator2);
      assert.equal(other.statusCode, 202, other.body);
    });
  });

  describe('audit export', () => {
    it('streams the chain as NDJSON that verifies from the genesis hash to the head', async () => {
      const res = await call('GET', '/v1/audit/export', hub.tokens.admin);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
      const records = res.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as AuditChainRecord);
      assert.ok(records.length > 10, `${records.length} rows`);
      const v = new AuditChainVerifier(AUDIT_GENESIS_HASH);
      for (const r of records) assert.equal(v.check(r), undefined);
      assert.deepEqual(await auditChainHead(hub.handle.db), { lastId: v.last!.id, lastHash: v.last!.hash });
      const part = await call('GET', `/v1/audit/export?from_id=3&to_id=5`, hub.tokens.admin);
      assert.deepEqual(
        part.body
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as AuditChainRecord).id),
        [3, 4, 5],
      );
      assert.equal((await call('GET', '/v1/audit/export', hub.tokens.operator)).statusCode, 403);
      assert.equal((await call('GET', '/v1/audit/export?from_id=5&to_id=3', hub.tokens.admin)).statusCode, 400);
    });

    it('audit-cli verifies an export file, and names the first line a change broke', async () => {
      const body = (await call('GET', '/v1/audit/export', hub.tokens.admin)).body;
      const file = join(dir, 'audit.ndjson');
      await writeFile(file, body);
      const ok = await auditCli('--file', file, '--anchor', AUDIT_GENESIS_HASH);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.out?.['ok'], true);
      const lines = body.trim().split('\n');
      const fifth = JSON.parse(lines[4]!) as AuditChainRecord;
      lines[4] = JSON.stringify({ ...fifth, actor: 'mallory' });
      await writeFile(file, lines.join('\n'));
      const bad = await auditCli('--file', file);
      assert.equal(bad.code, 1, bad.stderr);
      assert.equal(bad.out?.['brokenAt'], fifth.id);
      assert.match(String(bad.out?.['problem']), /fields differ/);
      // Dropping a line breaks the chain at the next one.
      lines.splice(4, 1);
      await writeFile(file, lines.join('\n'));
      const gap = await auditCli('--file', file);
      assert.equal(gap.code, 1);
      assert.match(String(gap.out?.['problem']), /prev_hash is not the hash of row/);
    });

    it('audit-cli verifies the database, and finds a row changed by a superuser with the triggers off', async () => {
      const url = (hub.handle.pool.options as { connectionString: string }).connectionString;
      const config = join(dir, 'hub.json');
      await writeFile(
        config,
        JSON.stringify({ database: { url }, http: { port: 0, allowPlainHttp: true }, metrics: { port: 0 } }),
      );
      const ok = await auditCli('--config', config, '--page-size', '3');
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.out?.['ok'], true);
      await hub.handle.pool.query('alter table audit_log disable trigger user');
      await hub.handle.pool.query("update audit_log set outcome = 'rejected' where id = 2");
      await hub.handle.pool.query('alter table audit_log enable trigger user');
      const bad = await auditCli('--config', config, '--page-size', '3');
      assert.equal(bad.code, 1, bad.stderr);
      assert.equal(bad.out?.['brokenAt'], 2);
      assert.match(String(bad.out?.['problem']), /row 2: its hash does not match its content/);
    });
  });
});

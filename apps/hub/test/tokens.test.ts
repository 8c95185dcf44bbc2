import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { finished } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import {
  createApiToken,
  firmwareManifests,
  firmwarePackages,
  insertDevice,
  insertSite,
  jobs,
  racks,
  type DbHandle,
  type Device,
} from '@fleet/db';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// Tokens through the API (make, list, revoke, expiry, last use) and per-site roles (docs/security.md): a token limited
// to site dc-a acts on and reads dc-a only; a satellite token fetches only the blobs its site's open jobs push.
describe('API tokens and per-site roles', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let tokens: TestHub['tokens'];
  type JobItem = { target: { site_id: string | null } };
  const dev: Record<'a' | 'b', Device> = {} as never;
  const rack: Record<'a' | 'b', string> = { a: '', b: '' };
  const campaign: Record<'a' | 'b', string> = { a: '', b: '' };
  /** Blob digests: pushed by a dc-a job through package_id, through a manifest, and by a dc-b job. */
  const blob = { aDirect: '', aManifest: '', b: '' };
  let opA = '';
  let satA = '';

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, token: string, body?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  const denied = (res: { statusCode: number; body: string }, site: string) => {
    assert.equal(res.statusCode, 403, res.body);
    const error = JSON.parse(res.body).error as { code: string; message: string };
    assert.equal(error.code, 'PERMISSION_DENIED');
    assert.match(error.message, new RegExp(`\\b${site}\\b`), error.message);
  };
  const badField = (res: { statusCode: number; body: string }, field: string, status = 400) => {
    assert.equal(res.statusCode, status, res.body);
    const details = (JSON.parse(res.body).error.details ?? []) as { field?: string }[];
    assert.ok(
      details.some((d) => d.field === field),
      `expected ${field} among ${JSON.stringify(details)}`,
    );
  };

  const storeBlob = async (text: string) => {
    const bytes = Buffer.from(text);
    const digest = createHash('sha256').update(bytes).digest('hex');
    const upload = await hub.blobs!.beginWrite();
    upload.stream.end(bytes);
    await finished(upload.stream);
    await upload.commit(digest);
    const [pkg] = await handle.db
      .insert(firmwarePackages)
      .values({
        digest,
        sizeBytes: bytes.length,
        fileName: `${text}.bin`,
        format: 'pldm',
        packageVersion: '1',
        metadata: { headerRevision: '1', headerUuid: 'u', releaseDateTime: null, devices: [], components: [] },
        uploadedBy: 'test',
      })
      .returning();
    return pkg!;
  };

  before(async () => {
    hub = await startTestHub({ maxPackageBytes: 1 << 20 });
    ({ handle, app, tokens } = hub);
    const db = handle.db;
    for (const s of ['a', 'b'] as const) {
      await insertSite(db, { id: `dc-${s}`, name: `DC ${s}` });
      rack[s] = (
        await db
          .insert(racks)
          .values({ siteId: `dc-${s}`, name: `r-${s}`, rackType: 'gb200_nvl72' })
          .returning()
      )[0]!.id;
      dev[s] = await insertDevice(db, {
        name: `ct-${s}`,
        siteId: `dc-${s}`,
        rackId: rack[s],
        nodeType: 'compute_gb200_nvidia',
        bmcUrl: 'http://127.0.0.1:9000',
        credentialRef: 'bmc/default',
      });
    }
    const pkgA = await storeBlob('direct-a');
    const pkgM = await storeBlob('manifest-a');
    const pkgB = await storeBlob('direct-b');
    blob.aDirect = pkgA.digest;
    blob.aManifest = pkgM.digest;
    blob.b = pkgB.digest;
    const [manifest] = await db
      .insert(firmwareManifests)
      .values({
        name: 'm-a',
        hardwareType: 'compute_gb200_nvidia',
        steps: [{ name: 'main', packageId: pkgM.id, targets: [], components: [{ id: 'BMC', version: '2' }] }],
        createdBy: 'test',
      })
      .returning();
    const job = (siteId: string, kind: string, params: Record<string, unknown>, state = 'running') =>
      db
        .insert(jobs)
        .values({ kind, siteId, params, state, createdBy: 'test' })
        .returning()
        .then((r) => r[0]!.id);
    await job('dc-a', 'switch.nvos_install', { package_id: pkgA.id });
    await job('dc-a', 'device.firmware_update', { manifest_id: manifest!.id });
    await job('dc-b', 'switch.nvos_install', { package_id: pkgB.id });
    campaign.a = await job('dc-a', 'firmware.campaign', {});
    campaign.b = await job('dc-b', 'firmware.campaign', {});

    const made = await call('POST', '/v1/tokens', tokens.admin, {
      name: 'ops-dc-a',
      role: 'operator',
      sites: ['dc-a'],
    });
    assert.equal(made.statusCode, 201, made.body);
    opA = made.json().token;
    satA = (await createApiToken(db, 'sat-dc-a', 'satellite', { sites: ['dc-a'] })).token;
  });
  after(() => hub.close());

  describe('tokens', () => {
    it('makes a token whose secret is answered once and never listed; the creation is audited', async () => {
      const res = await call('POST', '/v1/tokens', tokens.admin, { name: 'ci', role: 'viewer', ttl_s: 3600 });
      assert.equal(res.statusCode, 201, res.body);
      const made = res.json();
      assert.match(made.token, /^fleet_/);
      assert.equal(res.headers['location'], `/v1/tokens/${made.id}`);
      assert.equal(made.state, 'active');
      assert.equal(made.sites, null);
      assert.equal(made.created_by, 't-admin');
      const ttl = Date.parse(made.expires_at) - Date.now();
      assert.ok(ttl > 3_500_000 && ttl <= 3_600_000, made.expires_at);
      assert.equal((await call('GET', '/v1/whoami', made.token)).json().name, 'ci');

      const one = await call('GET', `/v1/tokens/${made.id}`, tokens.admin);
      assert.equal(one.statusCode, 200, one.body);
      assert.equal(one.json().name, 'ci');
      const list = await call('GET', '/v1/tokens?limit=2', tokens.admin);
      assert.equal(list.statusCode, 200, list.body);
      assert.equal(list.json().items.length, 2);
      assert.ok(list.json().next_cursor);
      const next = await call('GET', `/v1/tokens?limit=100&cursor=${list.json().next_cursor}`, tokens.admin);
      const names = [...list.json().items, ...next.json().items].map((t: { name: string }) => t.name);
      assert.equal(new Set(names).size, names.length);
      for (const n of ['ci', 'ops-dc-a', 't-admin', 't-operator', 't-viewer']) assert.ok(names.includes(n), n);
      for (const body of [list.body, next.body, one.body]) {
        assert.ok(!body.includes(made.token), 'a listing shows a secret');
        assert.ok(
          !body.includes('token_hash') && !body.includes(createHash('sha256').update(made.token).digest('hex')),
        );
      }

      const audit = await call('GET', '/v1/audit?action=token.create&limit=5', tokens.admin);
      const row = audit.json().items.find((r: { target: string }) => r.target === `token/${made.id}`);
      assert.ok(row, audit.body);
      assert.equal(row.actor, 't-admin');
      assert.equal(row.details.role, 'viewer');
      assert.ok(!JSON.stringify(row).includes(made.token));
      assert.equal((await call('GET', '/v1/tokens', tokens.operator)).statusCode, 403);
    });

    it('refuses a revoked token on its next request, and audits the revocation', async () => {
      const made = (await call('POST', '/v1/tokens', tokens.admin, { name: 'leaky', role: 'operator' })).json();
      assert.equal((await call('GET', '/v1/whoami', made.token)).statusCode, 200);
      const res = await call('POST', `/v1/tokens/${made.id}/revoke`, tokens.admin, { reason: 'pasted in chat' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().state, 'revoked');
      assert.equal(res.json().revoke_reason, 'pasted in chat');
      assert.equal(res.json().revoked_by, 't-admin');
      // Cached a moment ago, refused at once all the same.
      assert.equal((await call('GET', '/v1/whoami', made.token)).statusCode, 401);
      const again = await call('POST', `/v1/tokens/${made.id}/revoke`, tokens.admin, { reason: 'twice' });
      assert.equal(again.statusCode, 409, again.body);
      badField(await call('POST', `/v1/tokens/${made.id}/revoke`, tokens.admin, {}), 'body.reason');
      const audit = await call('GET', '/v1/audit?action=token.revoke&limit=1', tokens.admin);
      assert.equal(audit.json().items[0].target, `token/${made.id}`);
      assert.equal(audit.json().items[0].details.reason, 'pasted in chat');
    });

    it('refuses an expired token at once, even one it has cached', async () => {
      const made = (await call('POST', '/v1/tokens', tokens.admin, { name: 'brief', role: 'viewer', ttl_s: 1 })).json();
      assert.equal((await call('GET', '/v1/whoami', made.token)).statusCode, 200);
      await new Promise((r) => setTimeout(r, Date.parse(made.expires_at) - Date.now() + 20));
      const res = await call('GET', '/v1/whoami', made.token);
      assert.equal(res.statusCode, 401, res.body);
      assert.equal((await call('GET', `/v1/tokens/${made.id}`, tokens.admin)).json().state, 'expired');
    });

    it('records last_used_at without a write per request', async () => {
      const made = (await call('POST', '/v1/tokens', tokens.admin, { name: 'busy', role: 'viewer' })).json();
      assert.equal(made.last_used_at, null);
      const before = Date.now();
      for (let i = 0; i < 5; i++) assert.equal((await call('GET', '/v1/whoami', made.token)).statusCode, 200);
      let used: string | null = null;
      for (let i = 0; i < 40 && !used; i++) {
        await new Promise((r) => setTimeout(r, 100));
        used = (await call('GET', `/v1/tokens/${made.id}`, tokens.admin)).json().last_used_at;
      }
      assert.ok(used, 'last_used_at was never written');
      assert.ok(Date.parse(used) >= before - 1000 && Date.parse(used) <= Date.now());
      // The five uses made one write: a second use within the minute writes nothing new.
      await call('GET', '/v1/whoami', made.token);
      await new Promise((r) => setTimeout(r, 1300));
      assert.equal((await call('GET', `/v1/tokens/${made.id}`, tokens.admin)).json().last_used_at, used);
    });

    it('names the field of bad input', async () => {
      const post = (body: unknown) => call('POST', '/v1/tokens', tokens.admin, body);
      badField(await post({ name: 'x1', role: 'viewer', sites: ['dc-nowhere'] }), 'body.sites');
      badField(await post({ name: 'x2', role: 'root' }), 'body.role');
      badField(await post({ name: 'x3', role: 'viewer', expires_at: '2020-01-01T00:00:00Z' }), 'body.expires_at');
      badField(await post({ name: 'x4', role: 'viewer', expires_at: 'tomorrow' }), 'body.expires_at');
      badField(await post({ name: 'x5', role: 'viewer', ttl_s: 0 }), 'body.ttl_s');
      badField(await post({ name: 'x6', role: 'viewer', ttl_s: 60, expires_at: '2099-01-01T00:00:00Z' }), 'body.ttl_s');
      badField(await post({ name: 'x7', role: 'satellite' }), 'body.sites');
      badField(await post({ name: 'x8', role: 'satellite', sites: ['dc-a', 'dc-b'] }), 'body.sites');
      badField(await post({ name: 'has space', role: 'viewer' }), 'body.name');
      badField(await post({ name: 'ops-dc-a', role: 'viewer' }), 'body.name', 409);
      // A site-scoped admin cannot make (or list) tokens: it would make itself one of every site.
      const scopedAdmin = (await post({ name: 'admin-a', role: 'admin', sites: ['dc-a'] })).json().token;
      denied(await call('POST', '/v1/tokens', scopedAdmin, { name: 'x9', role: 'admin' }), 'dc-a');
    });
  });

  describe('per-site roles', () => {
    it("refuses a dc-a operator's mutations on dc-b's device, rack, power batch and campaign", async () => {
      denied(await call('POST', `/v1/devices/${dev.b.id}/power`, opA, { action: 'on' }), 'dc-b');
      denied(await call('POST', `/v1/racks/${rack.b}/power`, opA, { op: 'on' }), 'dc-b');
      denied(await call('POST', '/v1/power-batches', opA, { action: 'on', site_id: 'dc-b' }), 'dc-b');
      denied(await call('POST', '/v1/power-batches', opA, { action: 'on', rack_id: rack.b }), 'dc-b');
      denied(
        await call('POST', '/v1/power-batches', opA, { action: 'on', filter: { site_id: ['dc-a', 'dc-b'] } }),
        'dc-b',
      );
      denied(await call('POST', `/v1/firmware-campaigns/${campaign.b}/pause`, opA), 'dc-b');
      denied(await call('POST', `/v1/firmware-campaigns/${campaign.b}/cancel`, opA), 'dc-b');
      denied(await call('POST', '/v1/firmware-campaigns', opA, { name: 'c', site_id: 'dc-b', dry_run: true }), 'dc-b');
      denied(await call('POST', `/v1/devices/${dev.b.id}/quarantine`, opA, { reason: 'x' }), 'dc-b');
      denied(await call('POST', '/v1/rma', opA, { device_id: dev.b.id, failed_part: 'gpu', reason: 'x' }), 'dc-b');
      // Routes that never learnt about sites refuse a scoped token outright.
      denied(await call('GET', '/v1/audit', opA), 'dc-a');
      denied(await call('POST', '/v1/sites', opA, { id: 'dc-c', name: 'C' }), 'dc-a');

      // Its own site works as before.
      const own = await call('POST', `/v1/devices/${dev.a.id}/power`, opA, { action: 'on' });
      assert.equal(own.statusCode, 202, own.body);
      // A filter without sites keeps to the token's: ct-b is never selected (ct-a is busy with the job above).
      const batch = await call('POST', '/v1/power-batches', opA, {
        action: 'off',
        filter: { node_type: ['compute_gb200_nvidia'] },
      });
      assert.equal(batch.statusCode, 202, batch.body);
      assert.deepEqual(
        batch.json().result.refused.map((r: { name: string }) => r.name),
        ['ct-a'],
      );
    });

    it('filters lists to its sites and refuses details of another site', async () => {
      const ids = async (url: string) =>
        ((await call('GET', url, opA)).json().items as { id?: string; site_id?: string }[]).map((i) => i.site_id);
      assert.deepEqual(await ids('/v1/devices'), ['dc-a']);
      assert.deepEqual(await ids('/v1/racks'), ['dc-a']);
      assert.deepEqual(
        ((await call('GET', '/v1/sites', opA)).json().items as { id: string }[]).map((s) => s.id),
        ['dc-a'],
      );
      const jobSites = ((await call('GET', '/v1/jobs?limit=100', opA)).json().items as JobItem[]).map(
        (j) => j.target.site_id,
      );
      assert.ok(jobSites.length >= 3);
      assert.deepEqual(new Set(jobSites), new Set(['dc-a']));
      denied(await call('GET', '/v1/jobs?site_id=dc-b', opA), 'dc-b');
      denied(await call('GET', '/v1/devices?site_id=dc-b', opA), 'dc-b');
      denied(await call('GET', `/v1/devices/${dev.b.id}`, opA), 'dc-b');
      denied(await call('GET', `/v1/racks/${rack.b}`, opA), 'dc-b');
      denied(await call('GET', `/v1/firmware-campaigns/${campaign.b}`, opA), 'dc-b');
      denied(await call('GET', '/v1/sites/dc-b', opA), 'dc-b');
      assert.equal((await call('GET', `/v1/devices/${dev.a.id}`, opA)).statusCode, 200);
      // A token of every site sees both.
      const all = (await call('GET', '/v1/devices', tokens.viewer)).json().items as { site_id: string }[];
      assert.deepEqual(new Set(all.map((d) => d.site_id)), new Set(['dc-a', 'dc-b']));
    });

    it("lets a satellite token fetch only the blobs its own site's open jobs push", async () => {
      const fetch = (digest: string) => call('GET', `/v1/firmware/blobs/${digest}`, satA);
      const direct = await fetch(blob.aDirect);
      assert.equal(direct.statusCode, 200, direct.body);
      assert.equal(direct.body, 'direct-a');
      assert.equal((await fetch(blob.aManifest)).body, 'manifest-a');
      denied(await fetch(blob.b), 'dc-a');
      // Nothing else a viewer reads.
      assert.equal((await call('GET', '/v1/devices', satA)).statusCode, 403);
      assert.equal((await call('GET', '/v1/firmware/packages', satA)).statusCode, 403);
      // Its site's observation targets, not another site's.
      assert.equal((await call('GET', '/v1/sites/dc-a/observation-targets', satA)).statusCode, 200);
      denied(await call('GET', '/v1/sites/dc-b/observation-targets', satA), 'dc-b');
      // An enrolment pushes its devices' baseline: the default manifest of their node type.
      const baseline = await storeBlob('baseline');
      await handle.db.insert(firmwareManifests).values({
        name: 'baseline',
        hardwareType: 'compute_gb200_nvidia',
        isDefault: true,
        steps: [{ name: 'main', packageId: baseline.id, targets: [], components: [{ id: 'BMC', version: '3' }] }],
        createdBy: 'test',
      });
      denied(await fetch(baseline.digest), 'dc-a');
      // A remediation writes the baseline again only when its playbook reflashes the device.
      const remediate = async (steps: string[]) => {
        const tray = await insertDevice(handle.db, {
          name: `ct-a-${steps.length}`,
          siteId: 'dc-a',
          rackId: rack.a,
          nodeType: 'compute_gb200_nvidia',
        });
        const params = { reason: 'x', playbook: { steps } };
        await handle.db.insert(jobs).values({
          kind: 'device.remediate',
          siteId: 'dc-a',
          deviceId: tray.id,
          params,
          state: 'running',
          createdBy: 't',
        });
      };
      await remediate(['hmc_reset', 'power_cycle']);
      denied(await fetch(baseline.digest), 'dc-a');
      await remediate(['hmc_reset', 'firmware_reflash', 'burn_in']);
      assert.equal((await fetch(baseline.digest)).body, 'baseline');
      await handle.pool.query(`update jobs set state = 'succeeded' where kind = 'device.remediate'`);
      denied(await fetch(baseline.digest), 'dc-a');
      await handle.db
        .insert(jobs)
        .values({ kind: 'rack.enrol', siteId: 'dc-a', rackId: rack.a, params: {}, state: 'running', createdBy: 't' });
      assert.equal((await fetch(baseline.digest)).body, 'baseline');
      // A finished job no longer opens its blob.
      await handle.pool.query(`update jobs set state = 'succeeded' where site_id = 'dc-b'`);
      const viewer = await call('GET', `/v1/firmware/blobs/${blob.b}`, tokens.viewer);
      assert.equal(viewer.statusCode, 200, viewer.body);
      await handle.pool.query(
        `update jobs set state = 'succeeded' where params->>'package_id' is not null and site_id = 'dc-a'`,
      );
      denied(await fetch(blob.aDirect), 'dc-a');
    });
  });
});

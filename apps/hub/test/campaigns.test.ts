import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  deviceFirmware,
  firmwareManifests,
  firmwarePackages,
  insertDevice,
  insertSite,
  racks,
  type DbHandle,
  type Device,
} from '@fleet/db';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// Firmware campaigns and device firmware jobs against a real Postgres, no Temporal: plans,
// jobs, intents and views come from the projection alone.
const durations = { compute: 1000, switch: 1500, power_shelf: 2000 };

describe('firmware campaigns API', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let tokens: TestHub['tokens'];
  const rack: Record<'a' | 'b', string> = { a: '', b: '' };
  const dev: Record<string, Device> = {};
  const manifest = { compute: '', computeAlt: '', switch: '' };

  before(async () => {
    hub = await startTestHub({ campaigns: { deviceDurationS: durations } });
    ({ handle, app, tokens } = hub);
    const db = handle.db;
    await insertSite(db, { id: 'fw', name: 'Firmware lab' });
    for (const r of ['a', 'b'] as const)
      rack[r] = (
        await db
          .insert(racks)
          .values({ siteId: 'fw', name: `rack-${r}`, rackType: 'gb200_nvl72' })
          .returning()
      )[0]!.id;
    const add = async (
      name: string,
      nodeType: string,
      rackId: string | null,
      bmcUrl: string | null = 'http://127.0.0.1:9000',
    ) =>
      (dev[name] = await insertDevice(db, {
        name,
        siteId: 'fw',
        rackId,
        nodeType,
        bmcUrl,
        credentialRef: 'bmc/default',
      }));
    // Per rack: three compute trays, a switch tray, a power shelf (no manifest for shelves).
    for (const r of ['a', 'b'] as const) {
      for (let i = 0; i < 3; i++) await add(`${r}-ct${i}`, 'compute_gb200_nvidia', rack[r]);
      await add(`${r}-sw0`, 'switch_gb200_nvidia', rack[r]);
      await add(`${r}-ps0`, 'powershelf_gb200_liteon', rack[r]);
    }
    await add('a-nobmc', 'compute_gb200_nvidia', rack.a, null);
    await add('loose-ct', 'compute_gb200_nvidia', null);
    const pkg = async (digest: string) =>
      (
        await db
          .insert(firmwarePackages)
          .values({
            digest,
            sizeBytes: 10,
            fileName: `${digest}.fwpkg`,
            format: 'pldm',
            packageVersion: '1',
            metadata: { headerRevision: '1', headerUuid: 'u', releaseDateTime: null, devices: [], components: [] },
            uploadedBy: 'test',
          })
          .returning()
      )[0]!.id;
    const computePkg = await pkg('c'.repeat(64));
    const switchPkg = await pkg('d'.repeat(64));
    const m = async (
      name: string,
      hardwareType: string,
      isDefault: boolean,
      packageId: string,
      components: { id: string; version: string }[],
    ) =>
      (
        await db
          .insert(firmwareManifests)
          .values({
            name,
            hardwareType,
            isDefault,
            steps: [{ name: 'main', packageId, targets: [], components }],
            createdBy: 'test',
          })
          .returning()
      )[0]!.id;
    manifest.compute = await m('gb200-compute-2.0', 'compute_gb200_nvidia', true, computePkg, [
      { id: 'BMC', version: '2.0' },
      { id: 'HGX', version: '1.5' },
    ]);
    manifest.computeAlt = await m('gb200-compute-2.1', 'compute_gb200_nvidia', false, computePkg, [
      { id: 'BMC', version: '2.1' },
      { id: 'HGX', version: '1.5' },
    ]);
    manifest.switch = await m('gb200-switch-3.0', 'switch_gb200_nvidia', true, switchPkg, [
      { id: 'NVSwitch', version: '3.0' },
    ]);
    // a-ct0 is compliant; a-ct1 runs an old BMC and an unknown HGX; the rest have never reported.
    await db.insert(deviceFirmware).values([
      { deviceId: dev['a-ct0']!.id, componentId: 'BMC', version: '2.0' },
      { deviceId: dev['a-ct0']!.id, componentId: 'HGX', version: '1.5' },
      { deviceId: dev['a-ct1']!.id, componentId: 'BMC', version: '1.0' },
    ]);
  });
  after(() => hub.close());

  const call = (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${opts.token ?? tokens.operator}`, ...opts.headers },
      ...(opts.body === undefined ? {} : { payload: opts.body as object }),
    });
  const count = async (sql: string, params: unknown[] = []) =>
    (await handle.pool.query(`select count(*)::int as n from ${sql}`, params)).rows[0].n as number;
  const written = async () => ({
    jobs: await count('jobs'),
    intents: await count('intents'),
    campaigns: await count('campaigns'),
  });
  const fields = (res: { json(): { error: { details: { field: string }[] } } }) =>
    res.json().error.details.map((d) => d.field);

  it(`a dry run plans from Postgres: compliant, unmanifested and inoperable devices left out with the reason, canary \
first, estimate above the floor; nothing written`, async () => {
    const before = await written();
    const res = await call('POST', '/v1/firmware-campaigns', {
      body: { name: 'dry', site_id: 'fw', dry_run: true, policy: { canarySize: 1, waveSize: 2 } },
    });
    assert.equal(res.statusCode, 200);
    const { plan } = res.json();
    const reasons = Object.fromEntries(plan.excluded.map((e: { name: string; reason: string }) => [e.name, e.reason]));
    assert.equal(reasons['a-ct0'], 'already compliant');
    assert.equal(reasons['a-nobmc'], 'the inventory gives no BMC address');
    assert.match(reasons['a-ps0'], /no manifest for powershelf_gb200_liteon/);
    assert.match(reasons['b-ps0'], /no manifest/);
    const planned = plan.devices.map((d: { name: string }) => d.name).sort();
    assert.deepEqual(planned, ['a-ct1', 'a-ct2', 'a-sw0', 'b-ct0', 'b-ct1', 'b-ct2', 'b-sw0', 'loose-ct']);
    const byName = Object.fromEntries(plan.devices.map((d: { name: string }) => [d.name, d]));
    assert.deepEqual(byName['a-ct1'].components, [
      { id: 'BMC', from: '1.0', to: '2.0' },
      { id: 'HGX', from: null, to: '1.5' },
    ]);
    assert.equal(byName['a-ct1'].manifest_id, manifest.compute);
    assert.equal(byName['a-sw0'].manifest_id, manifest.switch);
    assert.equal(byName['a-ct1'].power_domain, rack.a);
    assert.equal(byName['loose-ct'].power_domain, `device:${dev['loose-ct']!.id}`);
    assert.equal(plan.waves[0].kind, 'canary');
    assert.equal(plan.waves[0].device_ids.length, 1);
    assert.ok(
      plan.waves
        .slice(1)
        .every((w: { kind: string; device_ids: string[] }) => w.kind === 'wave' && w.device_ids.length <= 2),
    );
    assert.equal(plan.waves.flatMap((w: { device_ids: string[] }) => w.device_ids).length, 8);
    assert.ok(plan.lower_bound_s > 0);
    assert.ok(plan.estimated_duration_s >= plan.lower_bound_s);
    assert.deepEqual(await written(), before);
  });

  it(`filters select within the site (repeat = OR, filters AND); force takes compliant devices; an explicit manifest \
wins`, async () => {
    const dry = async (extra: Record<string, unknown>) => {
      const res = await call('POST', '/v1/firmware-campaigns', {
        body: { name: 'dry', site_id: 'fw', dry_run: true, ...extra },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().plan as {
        devices: { name: string; manifest_id: string; components: { to: string }[] }[];
        excluded: { name: string }[];
      };
    };
    const names = (p: { devices: { name: string }[] }) => p.devices.map((d) => d.name).sort();
    assert.deepEqual(names(await dry({ node_types: ['switch_gb200_nvidia'] })), ['a-sw0', 'b-sw0']);
    assert.deepEqual(
      names(await dry({ rack_ids: [rack.b], node_types: ['compute_gb200_nvidia', 'switch_gb200_nvidia'] })),
      ['b-ct0', 'b-ct1', 'b-ct2', 'b-sw0'],
    );
    assert.deepEqual(names(await dry({ device_ids: [dev['a-ct0']!.id, dev['b-ct0']!.id] })), ['b-ct0']);
    assert.deepEqual(names(await dry({ device_ids: [dev['a-ct0']!.id], policy: { force: true } })), ['a-ct0']);
    const alt = await dry({ rack_ids: [rack.a], manifests: { compute_gb200_nvidia: manifest.computeAlt } });
    assert.deepEqual(names(alt), ['a-ct0', 'a-ct1', 'a-ct2', 'a-sw0']);
    assert.ok(
      alt.devices
        .filter((d) => d.name.includes('ct'))
        .every((d) => d.manifest_id === manifest.computeAlt && d.components.some((c) => c.to === '2.1')),
    );
  });

  it('400s name the field: unknown site, a manifest for another type, a bad policy, an unknown key', async () => {
    for (const [body, field] of [
      [{ name: 'x', site_id: 'nowhere' }, 'body.site_id'],
      [
        { name: 'x', site_id: 'fw', manifests: { switch_gb200_nvidia: manifest.compute } },
        'body.manifests.switch_gb200_nvidia',
      ],
      [
        { name: 'x', site_id: 'fw', manifests: { switch_gb200_nvidia: '00000000-0000-4000-8000-000000000000' } },
        'body.manifests.switch_gb200_nvidia',
      ],
      [{ name: 'x', site_id: 'fw', policy: { canarySize: -1 } }, 'body.policy.canarySize'],
      [{ name: 'x', site_id: 'fw', node_types: ['toaster'] }, 'body.node_types.0'],
      [{ name: '', site_id: 'fw' }, 'body.name'],
      [{ name: 'x', site_id: 'fw', colour: 'red' }, 'body'],
    ] as const) {
      const res = await call('POST', '/v1/firmware-campaigns', { body });
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().error.code, 'INVALID_ARGUMENT');
      assert.ok(fields(res).includes(field), `${JSON.stringify(body)} → ${fields(res).join(',')}`);
    }
    assert.equal(
      (await call('POST', '/v1/firmware-campaigns', { token: tokens.viewer, body: { name: 'x', site_id: 'fw' } }))
        .statusCode,
      403,
    );
  });

  it('more than 5,000 devices to update is a 400 asking to narrow the selection', async () => {
    await insertSite(handle.db, { id: 'big', name: 'Big' });
    await handle.pool.query(`insert into devices (name, site_id, node_type, bmc_url, credential_ref)
      select 'ct-' || g, 'big', 'compute_gb200_nvidia', 'http://127.0.0.1:9000', 'bmc/default'
      from generate_series(1, 5001) g`);
    const res = await call('POST', '/v1/firmware-campaigns', { body: { name: 'big', site_id: 'big', dry_run: true } });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error.message, /at most 5000: narrow it/);
  });

  let campaignA = '';

  it(`creating a campaign writes its job and start intent, a job per device without intents, the campaign row and an \
audit row, in one go`, async () => {
    const body = { name: 'rack a to 2.0', site_id: 'fw', rack_ids: [rack.a], policy: { canarySize: 1, waveSize: 2 } };
    const res = await call('POST', '/v1/firmware-campaigns', {
      body,
      headers: { 'idempotency-key': 'camp-a', 'x-request-id': 'r-camp-a' },
    });
    assert.equal(res.statusCode, 202, res.body);
    const view = res.json();
    campaignA = view.id;
    assert.equal(res.headers['location'], `/v1/jobs/${campaignA}`);
    assert.equal(view.name, 'rack a to 2.0');
    assert.equal(view.plan.devices, 3);
    assert.deepEqual(view.plan.waves, [
      { index: 0, kind: 'canary', devices: 1 },
      { index: 1, kind: 'wave', devices: 2 },
    ]);
    assert.ok(view.plan.estimated_duration_s >= view.plan.lower_bound_s);
    assert.deepEqual(view.plan.excluded.map((e: { name: string }) => e.name).sort(), ['a-ct0', 'a-nobmc', 'a-ps0']);
    assert.equal(view.job.kind, 'firmware.campaign');
    assert.equal(view.job.state, 'queued');
    assert.deepEqual(view.job.children, { total: 3, by_state: { queued: 3 } });
    assert.equal(view.policy.canarySize, 1);
    assert.equal(view.policy.failureBudget, 2);

    const { rows: intents } = await handle.pool.query('select kind, status from intents where job_id = $1', [
      campaignA,
    ]);
    assert.deepEqual(intents, [{ kind: 'start', status: 'pending' }]);
    const { rows: children } = await handle.pool.query(
      `select j.id, j.device_id, j.kind, j.params, (select count(*)::int from intents i where i.job_id = ` +
        `j.id) as intents from jobs j where j.parent_id = $1`,
      [campaignA],
    );
    assert.equal(children.length, 3);
    assert.ok(
      children.every(
        (c) =>
          c.kind === 'device.firmware_update' && c.intents === 0 && c.params.manifest_id && c.params.force === false,
      ),
    );
    const ct1 = children.find((c) => c.device_id === dev['a-ct1']!.id);
    assert.deepEqual(ct1.params.components, [
      { id: 'BMC', from: '1.0', to: '2.0' },
      { id: 'HGX', from: null, to: '1.5' },
    ]);
    const {
      rows: [campaign],
    } = await handle.pool.query('select site_id, plan from campaigns where id = $1', [campaignA]);
    assert.equal(campaign.site_id, 'fw');
    const jobOf = Object.fromEntries(children.map((c) => [c.device_id, c.id]));
    assert.ok(campaign.plan.devices.every((d: { deviceId: string; jobId: string }) => d.jobId === jobOf[d.deviceId]));
    assert.equal(campaign.plan.lowerBoundS, view.plan.lower_bound_s);
    const { rows: audit } = await handle.pool.query(
      'select action, outcome, job_id from audit_log where request_id = $1',
      [`r-camp-a`],
    );
    assert.deepEqual(audit, [{ action: 'firmware.campaign', outcome: 'accepted', job_id: campaignA }]);

    const again = await call('POST', '/v1/firmware-campaigns', { body, headers: { 'idempotency-key': 'camp-a' } });
    assert.equal(again.statusCode, 202);
    assert.equal(again.json().id, campaignA);
    const other = await call('POST', '/v1/firmware-campaigns', {
      body: { ...body, name: 'other' },
      headers: { 'idempotency-key': 'camp-a' },
    });
    assert.equal(other.statusCode, 409);
    assert.equal(await count('jobs where kind = $1', ['firmware.campaign']), 1);
  });

  it('a campaign touching a busy device is a 409 listing the busy devices, and nothing is written', async () => {
    const before = await written();
    const res = await call('POST', '/v1/firmware-campaigns', { body: { name: 'whole site', site_id: 'fw' } });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().error.code, 'CONFLICT');
    assert.match(
      res.json().error.message,
      /^3 devices already have an active job: a-ct1 \(job [0-9a-f-]+, device\.firmware_update\)/,
    );
    assert.equal(res.json().error.details.length, 3);
    assert.deepEqual(await written(), before);
  });

  it('nothing to update is a 409 failed precondition', async () => {
    const res = await call('POST', '/v1/firmware-campaigns', {
      body: { name: 'shelves', site_id: 'fw', node_types: ['powershelf_gb200_liteon'] },
    });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().error.code, 'FAILED_PRECONDITION');
  });

  let campaignB = '';

  it('lists campaigns newest first with keyset pagination and filters', async () => {
    const res = await call('POST', '/v1/firmware-campaigns', {
      body: { name: 'rack b', site_id: 'fw', rack_ids: [rack.b] },
    });
    assert.equal(res.statusCode, 202, res.body);
    campaignB = res.json().id;
    const page1 = (await call('GET', '/v1/firmware-campaigns?limit=1', { token: tokens.viewer })).json();
    assert.deepEqual(
      page1.items.map((c: { id: string }) => c.id),
      [campaignB],
    );
    assert.equal(page1.items[0].plan.devices, 4);
    assert.equal(page1.items[0].plan.excluded, undefined);
    assert.equal(page1.items[0].job.children.total, 4);
    const page2 = (
      await call('GET', `/v1/firmware-campaigns?limit=1&cursor=${page1.next_cursor}`, { token: tokens.viewer })
    ).json();
    assert.deepEqual(
      page2.items.map((c: { id: string }) => c.id),
      [campaignA],
    );
    assert.equal(page2.next_cursor, null);
    assert.equal(
      (await call('GET', '/v1/firmware-campaigns?site_id=elsewhere', { token: tokens.viewer })).json().items.length,
      0,
    );
    assert.equal(
      (await call('GET', '/v1/firmware-campaigns?state=queued&site_id=fw', { token: tokens.viewer })).json().items
        .length,
      2,
    );
    assert.equal(
      (await call('GET', '/v1/firmware-campaigns?state=running', { token: tokens.viewer })).json().items.length,
      0,
    );
    const bad = await call('GET', '/v1/firmware-campaigns?cursor=nope', { token: tokens.viewer });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(fields(bad), ['query.cursor']);
  });

  it(`the detail and the devices endpoint show the phase, counts by state, failures and per-component results, paged \
by device name`, async () => {
    const { rows: children } = await handle.pool.query(
      'select j.id, d.name from jobs j join devices d on d.id = j.device_id where j.parent_id = $1 order by d.name',
      [campaignA],
    );
    const [ct1, ct2] = children;
    await handle.pool.query(`update jobs set state = 'running', progress = '{"stage": "canary"}' where id = $1`, [
      campaignA,
    ]);
    await handle.pool.query(`update jobs set state = 'succeeded', result = $2 where id = $1`, [
      ct1.id,
      {
        deviceId: dev['a-ct1']!.id,
        status: 'updated',
        components: [{ id: 'BMC', from: '1.0', to: '2.0', installed: '2.0', status: 'updated', code: 'SUCCESS' }],
        inventory: [],
      },
    ]);
    await handle.pool.query(`update jobs set state = 'failed', error = $2 where id = $1`, [
      ct2.id,
      { code: 'TASK_FAILED', message: 'BMC task failed' },
    ]);

    const detail = (await call('GET', `/v1/firmware-campaigns/${campaignA}`, { token: tokens.viewer })).json();
    assert.equal(detail.job.state, 'running');
    assert.deepEqual(detail.job.progress, { stage: 'canary' });
    assert.deepEqual(detail.job.children.by_state, { queued: 1, succeeded: 1, failed: 1 });
    assert.deepEqual(
      detail.failures.map((f: { name: string; error: { code: string } }) => [f.name, f.error.code]),
      [['a-ct2', 'TASK_FAILED']],
    );
    assert.equal(detail.plan.excluded_count, 3);

    const seen: { name: string; components: { id: string; status: string; installed: string | null }[] }[] = [];
    let cursor: string | null = '';
    do {
      const res = await call(
        'GET',
        `/v1/firmware-campaigns/${campaignA}/devices?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { token: tokens.viewer },
      );
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.ok(body.items.length <= 2);
      seen.push(...body.items);
      cursor = body.next_cursor;
    } while (cursor);
    assert.deepEqual(
      seen.map((d) => d.name),
      ['a-ct1', 'a-ct2', 'a-sw0'],
    );
    assert.deepEqual(
      seen[0]!.components.map((c) => [c.id, c.status, c.installed]),
      [['BMC', 'updated', '2.0']],
    );
    assert.deepEqual(
      seen[2]!.components.map((c) => [c.id, c.status]),
      [['NVSwitch', 'planned']],
    );
    const failed = (
      await call('GET', `/v1/firmware-campaigns/${campaignA}/devices?state=failed`, { token: tokens.viewer })
    ).json();
    assert.deepEqual(
      failed.items.map((d: { name: string }) => d.name),
      ['a-ct2'],
    );

    assert.equal(
      (await call('GET', '/v1/firmware-campaigns/00000000-0000-4000-8000-000000000000', { token: tokens.viewer }))
        .statusCode,
      404,
    );
    assert.equal((await call('GET', `/v1/firmware-campaigns/${ct1.id}`, { token: tokens.viewer })).statusCode, 404);
  });

  it(`pause, resume and approve record a signal intent and an audit row; cancel goes through the job cancel; all 409 \
once the campaign has ended`, async () => {
    for (const signal of ['pause', 'resume', 'approve']) {
      const res = await call('POST', `/v1/firmware-campaigns/${campaignA}/${signal}`, {
        headers: { 'x-request-id': `r-${signal}` },
      });
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.json().id, campaignA);
      assert.equal(res.headers['location'], `/v1/jobs/${campaignA}`);
      const { rows: audit } = await handle.pool.query('select action, job_id from audit_log where request_id = $1', [
        `r-${signal}`,
      ]);
      assert.deepEqual(audit, [{ action: `firmware.campaign.${signal}`, job_id: campaignA }]);
    }
    const { rows } = await handle.pool.query(
      `select payload, status from intents where job_id = $1 and kind = 'signal' order by id`,
      [campaignA],
    );
    assert.deepEqual(
      rows,
      ['pause', 'resume', 'approve'].map((signal) => ({ payload: { signal }, status: 'pending' })),
    );

    const cancel = await call('POST', `/v1/firmware-campaigns/${campaignB}/cancel`);
    assert.equal(cancel.statusCode, 202);
    assert.equal(cancel.json().state, 'cancelling');
    assert.equal(await count(`intents where job_id = $1 and kind = 'cancel'`, [campaignB]), 1);

    await handle.pool.query(`update jobs set state = 'succeeded', finished_at = now() where id = $1`, [campaignA]);
    for (const action of ['approve', 'cancel']) {
      const res = await call('POST', `/v1/firmware-campaigns/${campaignA}/${action}`);
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().error.code, 'FAILED_PRECONDITION');
    }
    assert.equal(await count(`intents where job_id = $1 and kind in ('signal', 'cancel')`, [campaignA]), 3);
    assert.equal(
      (await call('POST', `/v1/firmware-campaigns/${campaignA}/pause`, { token: tokens.viewer })).statusCode,
      403,
    );
  });

  it(`a device firmware update takes the given or the default manifest, refuses busy devices and types without one; a \
refresh is a job too`, async () => {
    const loose = dev['loose-ct']!.id;
    const wrong = await call('POST', `/v1/devices/${loose}/firmware-update`, {
      body: { manifest_id: manifest.switch },
    });
    assert.equal(wrong.statusCode, 400);
    assert.deepEqual(fields(wrong), ['body.manifest_id']);
    const res = await call('POST', `/v1/devices/${loose}/firmware-update`, {
      body: {},
      headers: { 'idempotency-key': 'fw-loose' },
    });
    assert.equal(res.statusCode, 202, res.body);
    const job = res.json();
    assert.equal(res.headers['location'], `/v1/jobs/${job.id}`);
    assert.equal(job.kind, 'device.firmware_update');
    assert.deepEqual(job.params, { manifest_id: manifest.compute, force: false });
    assert.equal(await count(`intents where job_id = $1 and kind = 'start'`, [job.id]), 1);
    assert.equal(
      (
        await call('POST', `/v1/devices/${loose}/firmware-update`, {
          body: {},
          headers: { 'idempotency-key': 'fw-loose' },
        })
      ).json().id,
      job.id,
    );
    const busy = await call('POST', `/v1/devices/${loose}/firmware-refresh`);
    assert.equal(busy.statusCode, 409);
    assert.equal(busy.json().error.code, 'CONFLICT');

    const explicit = await call('POST', `/v1/devices/${dev['a-ct0']!.id}/firmware-update`, {
      body: { manifest_id: manifest.computeAlt, force: true },
    });
    assert.equal(explicit.statusCode, 202);
    assert.deepEqual(explicit.json().params, { manifest_id: manifest.computeAlt, force: true });

    const shelf = await call('POST', `/v1/devices/${dev['a-ps0']!.id}/firmware-update`, { body: {} });
    assert.equal(shelf.statusCode, 409);
    assert.equal(shelf.json().error.code, 'FAILED_PRECONDITION');
    assert.match(shelf.json().error.message, /no default firmware manifest for powershelf_gb200_liteon/);
    const noBmc = await call('POST', `/v1/devices/${dev['a-nobmc']!.id}/firmware-refresh`);
    assert.equal(noBmc.statusCode, 409);
    assert.match(noBmc.json().error.message, /BMC address/);

    const refresh = await call('POST', `/v1/devices/${dev['a-ps0']!.id}/firmware-refresh`);
    assert.equal(refresh.statusCode, 202);
    assert.equal(refresh.json().kind, 'device.firmware_refresh');
    assert.equal(await count(`intents where job_id = $1 and kind = 'start'`, [refresh.json().id]), 1);
  });

  it(`maintenance windows: admins replace them in one go (If-Match honoured), anyone reads them back, bad ones are \
named field by field`, async () => {
    assert.deepEqual((await call('GET', '/v1/sites/fw/maintenance-windows', { token: tokens.viewer })).json(), {
      windows: [],
    });
    const windows = [
      { weekdays: [6, 0], start: '22:00', duration_minutes: 360 },
      { weekdays: [3], start: '01:30', duration_minutes: 120 },
    ];
    assert.equal((await call('PUT', '/v1/sites/fw/maintenance-windows', { body: { windows } })).statusCode, 403);
    const put = await call('PUT', '/v1/sites/fw/maintenance-windows', {
      token: tokens.admin,
      body: { windows },
      headers: { 'x-request-id': 'r-mw' },
    });
    assert.equal(put.statusCode, 200, put.body);
    const got = (await call('GET', '/v1/sites/fw/maintenance-windows', { token: tokens.viewer })).json().windows;
    assert.deepEqual(got, [windows[1], windows[0]]);
    const { rows: audit } = await handle.pool.query('select action, outcome from audit_log where request_id = $1', [
      'r-mw',
    ]);
    assert.deepEqual(audit, [{ action: 'site.maintenance_windows', outcome: 'accepted' }]);

    const read = await call('GET', '/v1/sites/fw/maintenance-windows', { token: tokens.viewer });
    assert.equal(read.headers['etag'], put.headers['etag']);
    const replaced = await call('PUT', '/v1/sites/fw/maintenance-windows', {
      token: tokens.admin,
      body: { windows: [windows[1]] },
      headers: { 'if-match': String(read.headers['etag']) },
    });
    assert.equal(replaced.statusCode, 200, replaced.body);
    assert.deepEqual(replaced.json().windows, [windows[1]]);
    assert.equal(await count(`maintenance_windows where site_id = 'fw'`), 1);
    const stale = await call('PUT', '/v1/sites/fw/maintenance-windows', {
      token: tokens.admin,
      body: { windows: [] },
      headers: { 'if-match': String(read.headers['etag']) },
    });
    assert.equal(stale.statusCode, 412);
    assert.equal(stale.json().error.code, 'FAILED_PRECONDITION');
    assert.equal(await count(`maintenance_windows where site_id = 'fw'`), 1);

    const bad = await call('PUT', '/v1/sites/fw/maintenance-windows', {
      token: tokens.admin,
      body: {
        windows: [
          { weekdays: [7], start: '24:00', duration_minutes: 0 },
          { weekdays: [1, 1], start: '08:00', duration_minutes: 60, extra: 1 },
        ],
      },
    });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(
      fields(bad).sort(),
      [
        'body.windows.0.duration_minutes',
        'body.windows.0.start',
        'body.windows.0.weekdays.0',
        'body.windows.1',
        'body.windows.1.weekdays',
      ].sort(),
    );
    assert.equal(await count(`maintenance_windows where site_id = 'fw'`), 1);
    assert.equal(
      (await call('GET', '/v1/sites/nowhere/maintenance-windows', { token: tokens.viewer })).statusCode,
      404,
    );
  });

  it('every campaign endpoint is in the OpenAPI document', async () => {
    const paths = (await call('GET', '/openapi.json')).json().paths;
    for (const p of [
      '/v1/firmware-campaigns',
      '/v1/firmware-campaigns/{id}',
      '/v1/firmware-campaigns/{id}/devices',
      '/v1/firmware-campaigns/{id}/pause',
      '/v1/firmware-campaigns/{id}/resume',
      '/v1/firmware-campaigns/{id}/approve',
      '/v1/firmware-campaigns/{id}/cancel',
      '/v1/devices/{id}/firmware-update',
      '/v1/devices/{id}/firmware-refresh',
    ]) {
      assert.ok(paths[p]?.post ?? paths[p]?.get, p);
    }
    assert.ok(paths['/v1/sites/{id}/maintenance-windows'].put && paths['/v1/sites/{id}/maintenance-windows'].get);
  });
});

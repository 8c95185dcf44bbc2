import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  firmwareManifests,
  firmwarePackages,
  heldDevices,
  insertDevice,
  insertSite,
  racks,
  setLifecycle,
  type DbHandle,
  type Device,
} from '@fleet/db';
import type { FleetLifecycleState } from '@fleet/domain';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// Held devices (quarantined, remediating, rma; docs/day2.md): campaigns and power batches leave them out and say why,
// rack sequences, enrolment and device jobs refuse them with 409, and an operator's override with a reason lets them
// through and is audited. The holds are written as the lifecycle workflow writes them, through the repository.
type HeldDevice = { device_id: string; name: string; state: string; since: string; reason: string };
type AuditDetails = {
  skipped?: number;
  params?: unknown;
  override_quarantine?: { reason: string; devices: HeldDevice[] };
};

describe('held devices in the hub API', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let tokens: TestHub['tokens'];
  const dev: Record<string, Device> = {};
  const rack: Record<'camp' | 'batch' | 'seq', string> = { camp: '', batch: '', seq: '' };
  /** Device name → when it entered its held state. */
  const since: Record<string, string> = {};

  const hold = async (name: string, path: FleetLifecycleState[], reason: string, message?: string) => {
    for (const to of path) {
      const change = await setLifecycle(handle.db, {
        deviceId: dev[name]!.id,
        to,
        writer: 'lifecycle-workflow',
        jobId: randomUUID(),
        reason,
        message,
      });
      since[name] = change!.transition!.at.toISOString();
    }
  };

  before(async () => {
    hub = await startTestHub({ campaigns: { deviceDurationS: { compute: 1000, switch: 1500, power_shelf: 2000 } } });
    ({ handle, app, tokens } = hub);
    const db = handle.db;
    await insertSite(db, { id: 'hold', name: 'Holds' });
    for (const r of ['camp', 'batch', 'seq'] as const)
      rack[r] = (
        await db.insert(racks).values({ siteId: 'hold', name: r, rackType: 'gb200_nvl72' }).returning()
      )[0]!.id;
    const add = async (name: string, nodeType: string, rackId: string | null) =>
      (dev[name] = await insertDevice(db, {
        name,
        siteId: 'hold',
        rackId,
        nodeType,
        bmcUrl: 'http://127.0.0.1:9000',
        credentialRef: 'bmc/default',
      }));
    for (const name of ['c-held', 'c-fixing', 'c-ok']) await add(name, 'compute_gb200_nvidia', rack.camp);
    for (const name of ['b-held', 'b-ok1', 'b-ok2']) await add(name, 'compute_gb200_nvidia', rack.batch);
    await add('s-ps0', 'powershelf_gb200_liteon', rack.seq);
    await add('s-sw0', 'switch_gb200_nvidia', rack.seq);
    await add('s-ct0', 'compute_gb200_nvidia', rack.seq);
    await add('s-held', 'compute_gb200_nvidia', rack.seq);
    await add('d-held', 'compute_gb200_nvidia', null);
    await add('d-rma', 'compute_gb200_nvidia', null);

    await hold('c-held', ['quarantined'], 'LeakDetected', 'leak on LeakDetector_1');
    await hold('c-fixing', ['quarantined', 'remediating'], 'OperatorRemediation');
    await hold('b-held', ['quarantined'], 'GpuOffBus', 'GPU_1 fell off the bus');
    await hold('s-held', ['quarantined'], 'PsuFault', 'PSU_3 failed');
    await hold('d-held', ['quarantined'], 'OperatorQuarantine', 'suspect DIMM, hands off');
    await hold('d-rma', ['quarantined', 'rma'], 'ReturnToVendor', 'RMA 4711');

    const [pkg] = await db
      .insert(firmwarePackages)
      .values({
        digest: 'e'.repeat(64),
        sizeBytes: 10,
        fileName: 'compute.fwpkg',
        format: 'pldm',
        packageVersion: '1',
        metadata: { headerRevision: '1', headerUuid: 'u', releaseDateTime: null, devices: [], components: [] },
        uploadedBy: 'test',
      })
      .returning();
    await db.insert(firmwareManifests).values({
      name: 'gb200-compute-2.0',
      hardwareType: 'compute_gb200_nvidia',
      isDefault: true,
      steps: [{ name: 'main', packageId: pkg!.id, targets: [], components: [{ id: 'BMC', version: '2.0' }] }],
      createdBy: 'test',
    });
  });
  after(() => hub.close());

  const call = (method: 'GET' | 'POST', url: string, body?: unknown, token = tokens.operator) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  /** The newest audit row of `action` (a refused request's action is its route, so this one was accepted). */
  const audited = async (action: string) => {
    const res = await call('GET', `/v1/audit?action=${action}&limit=1`, undefined, tokens.viewer);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().items[0] as { job_id: string; details: AuditDetails };
  };
  const childrenOf = async (jobId: string) =>
    (
      await handle.pool.query<{ device_id: string }>('select device_id from jobs where parent_id = $1', [jobId])
    ).rows.map((r) => r.device_id);

  it('the repository answers the held devices of a set with state, since and the reason of the move', async () => {
    const ids = Object.values(dev).map((d) => d.id);
    const holds = await heldDevices(handle.db, ids);
    assert.deepEqual(
      holds.map((h) => [h.name, h.state, h.since.toISOString(), h.reason, h.message]),
      [
        ['b-held', 'quarantined', since['b-held'], 'GpuOffBus', 'GPU_1 fell off the bus'],
        ['c-fixing', 'remediating', since['c-fixing'], 'OperatorRemediation', null],
        ['c-held', 'quarantined', since['c-held'], 'LeakDetected', 'leak on LeakDetector_1'],
        ['d-held', 'quarantined', since['d-held'], 'OperatorQuarantine', 'suspect DIMM, hands off'],
        ['d-rma', 'rma', since['d-rma'], 'ReturnToVendor', 'RMA 4711'],
        ['s-held', 'quarantined', since['s-held'], 'PsuFault', 'PSU_3 failed'],
      ],
    );
    assert.deepEqual(await heldDevices(handle.db, [dev['c-ok']!.id]), []);
    assert.deepEqual(await heldDevices(handle.db, []), []);
  });

  it('a campaign plan leaves held devices out with the state, since when and why; an override plans them', async () => {
    const body = { name: 'camp', site_id: 'hold', rack_ids: [rack.camp], dry_run: true };
    const dry = await call('POST', '/v1/firmware-campaigns', body);
    assert.equal(dry.statusCode, 200, dry.body);
    const { plan } = dry.json();
    assert.deepEqual(
      plan.devices.map((d: { name: string }) => d.name),
      ['c-ok'],
    );
    assert.deepEqual(plan.excluded, [
      {
        device_id: dev['c-fixing']!.id,
        name: 'c-fixing',
        reason: `remediating since ${since['c-fixing']}: OperatorRemediation`,
      },
      {
        device_id: dev['c-held']!.id,
        name: 'c-held',
        reason: `quarantined since ${since['c-held']}: leak on LeakDetector_1 (LeakDetected)`,
      },
    ]);
    const overridden = await call('POST', '/v1/firmware-campaigns', {
      ...body,
      override_quarantine: { reason: 'leak fixed, firmware first' },
    });
    assert.equal(overridden.statusCode, 200, overridden.body);
    assert.deepEqual(
      overridden
        .json()
        .plan.devices.map((d: { name: string }) => d.name)
        .sort(),
      ['c-fixing', 'c-held', 'c-ok'],
    );
    const blank = await call('POST', '/v1/firmware-campaigns', { ...body, override_quarantine: { reason: ' ' } });
    assert.equal(blank.statusCode, 400);
    assert.equal(blank.json().error.details[0].field, 'body.override_quarantine.reason');
  });

  it('a created campaign lists the held devices it left out; an override takes them and audits it', async () => {
    const res = await call('POST', '/v1/firmware-campaigns', { name: 'camp', site_id: 'hold', rack_ids: [rack.camp] });
    assert.equal(res.statusCode, 202, res.body);
    const view = res.json();
    assert.equal(view.plan.devices, 1);
    assert.deepEqual(
      view.plan.excluded.map((e: { name: string; reason: string }) => [e.name, e.reason.split(' since ')[0]]),
      [
        ['c-fixing', 'remediating'],
        ['c-held', 'quarantined'],
      ],
    );
    assert.deepEqual(await childrenOf(view.id), [dev['c-ok']!.id]);
    assert.equal((await audited('firmware.campaign')).details['override_quarantine'], undefined);

    const forced = await call('POST', '/v1/firmware-campaigns', {
      name: 'held one',
      site_id: 'hold',
      device_ids: [dev['c-held']!.id],
      override_quarantine: { reason: 'leak fixed, firmware first' },
    });
    assert.equal(forced.statusCode, 202, forced.body);
    assert.deepEqual(await childrenOf(forced.json().id), [dev['c-held']!.id]);
    const row = await audited('firmware.campaign');
    assert.equal(row.job_id, forced.json().id);
    assert.deepEqual(row.details.override_quarantine, {
      reason: 'leak fixed, firmware first',
      devices: [
        {
          device_id: dev['c-held']!.id,
          name: 'c-held',
          state: 'quarantined',
          since: since['c-held'],
          reason: `quarantined since ${since['c-held']}: leak on LeakDetector_1 (LeakDetected)`,
        },
      ],
    });
  });

  it('a power batch skips held devices and lists them in its answer; an override includes them, audited', async () => {
    const res = await call('POST', '/v1/power-batches', { rack_id: rack.batch, action: 'on' });
    assert.equal(res.statusCode, 202, res.body);
    const job = res.json();
    assert.equal(job.result.admitted, 2);
    assert.deepEqual(job.result.refused, []);
    assert.deepEqual(job.result.skipped, [
      {
        device_id: dev['b-held']!.id,
        name: 'b-held',
        state: 'quarantined',
        since: since['b-held'],
        reason: `quarantined since ${since['b-held']}: GPU_1 fell off the bus (GpuOffBus)`,
      },
    ]);
    assert.deepEqual((await childrenOf(job.id)).sort(), [dev['b-ok1']!.id, dev['b-ok2']!.id].sort());
    const row = await audited('batch.power');
    assert.equal(row.details.skipped, 1);
    assert.equal(row.details.override_quarantine, undefined);

    const forced = await call('POST', '/v1/power-batches', {
      rack_id: rack.batch,
      action: 'off',
      override_quarantine: { reason: 'power it down for the GPU swap' },
    });
    assert.equal(forced.statusCode, 202, forced.body);
    // The other two are still busy with the first batch.
    assert.equal(forced.json().result.admitted, 1);
    assert.deepEqual(forced.json().result.skipped, []);
    assert.deepEqual(await childrenOf(forced.json().id), [dev['b-held']!.id]);
    const overridden = (await audited('batch.power')).details.override_quarantine!;
    assert.equal(overridden.reason, 'power it down for the GPU swap');
    assert.deepEqual(
      overridden.devices.map((d: { name: string }) => d.name),
      ['b-held'],
    );
  });

  it('a rack sequence on a rack with a held device is a 409 naming it and why, and runs with an override', async () => {
    for (const [url, body] of [
      [`/v1/racks/${rack.seq}/power`, { op: 'on' }],
      [`/v1/racks/${rack.seq}/cold-reboot`, {}],
    ] as const) {
      const res = await call('POST', url, body);
      assert.equal(res.statusCode, 409, res.body);
      const { error } = res.json();
      assert.equal(error.code, 'CONFLICT');
      assert.equal(
        error.message,
        `rack/${rack.seq}: s-held is quarantined since ${since['s-held']}: PSU_3 failed (PsuFault). Only ` +
          'remediation acts on a held device; send override_quarantine: {reason} to act on it anyway',
      );
      assert.deepEqual(error.details, [
        {
          field: `device/${dev['s-held']!.id}`,
          issue: `quarantined since ${since['s-held']}: PSU_3 failed (PsuFault)`,
        },
      ]);
    }
    assert.equal(
      (await handle.pool.query("select count(*)::int as n from jobs where kind like 'rack.%'")).rows[0].n,
      0,
    );
    const res = await call('POST', `/v1/racks/${rack.seq}/power`, {
      op: 'on',
      override_quarantine: { reason: 'shelf swap needs the rack up' },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await childrenOf(res.json().id)).length, 4);
    const row = await audited('rack.power');
    assert.equal(row.job_id, res.json().id);
    assert.equal(row.details.override_quarantine?.reason, 'shelf swap needs the rack up');
    assert.deepEqual(
      row.details.override_quarantine!.devices.map((d: { name: string }) => d.name),
      ['s-held'],
    );
  });

  it('a device job on a held device is a 409 unless overridden; reading it is not refused', async () => {
    const id = dev['d-held']!.id;
    const text = `quarantined since ${since['d-held']}: suspect DIMM, hands off (OperatorQuarantine)`;
    for (const [url, body] of [
      [`/v1/devices/${id}/power`, { action: 'on' }],
      [`/v1/devices/${id}/bmc-reset`, {}],
      [`/v1/devices/${id}/firmware-update`, {}],
    ] as const) {
      const res = await call('POST', url, body);
      assert.equal(res.statusCode, 409, `${url}: ${res.body}`);
      assert.match(res.json().error.message, new RegExp(`^d-held is ${text.replace(/[()]/g, '\\$&')}\\. Only`));
    }
    const rma = await call('POST', `/v1/devices/${dev['d-rma']!.id}/power`, { action: 'on' });
    assert.equal(rma.statusCode, 409);
    assert.match(rma.json().error.message, /^d-rma is rma since .*: RMA 4711 \(ReturnToVendor\)/);
    assert.equal(
      (await handle.pool.query('select count(*)::int as n from jobs where device_id = $1', [id])).rows[0].n,
      0,
    );

    const refresh = await call('POST', `/v1/devices/${id}/power-refresh`);
    assert.equal(refresh.statusCode, 202, refresh.body);
    await handle.pool.query(`update jobs set state = 'succeeded', finished_at = now() where id = $1`, [
      refresh.json().id,
    ]);

    const res = await call('POST', `/v1/devices/${id}/power`, {
      action: 'off',
      override_quarantine: { reason: 'pull it for the DIMM swap' },
    });
    assert.equal(res.statusCode, 202, res.body);
    const row = await audited('device.power');
    assert.equal(row.job_id, res.json().id);
    assert.deepEqual(row.details, {
      params: { action: 'off' },
      override_quarantine: {
        reason: 'pull it for the DIMM swap',
        devices: [{ device_id: id, name: 'd-held', state: 'quarantined', since: since['d-held'], reason: text }],
      },
    });
  });

  it('enrolling or burning in a held device is a 409 saying since when and why it is held', async () => {
    const enrol = await call('POST', `/v1/devices/${dev['d-rma']!.id}/enrol`);
    assert.equal(enrol.statusCode, 409, enrol.body);
    assert.equal(
      enrol.json().error.message,
      `d-rma is rma since ${since['d-rma']}: RMA 4711 (ReturnToVendor); it cannot move to enrolling: only ` +
        'remediation acts on a held device',
    );
    const burnIn = await call('POST', `/v1/devices/${dev['c-fixing']!.id}/burn-in`);
    assert.equal(burnIn.statusCode, 409, burnIn.body);
    assert.match(burnIn.json().error.message, /^c-fixing is remediating since .*: OperatorRemediation; it cannot/);
    const rackEnrol = await call('POST', `/v1/racks/${rack.seq}/enrol`);
    assert.equal(rackEnrol.statusCode, 409, rackEnrol.body);
    assert.match(
      rackEnrol.json().error.message,
      new RegExp(`s-held is quarantined since ${since['s-held']}: PSU_3 failed \\(PsuFault\\)`),
    );
  });
});

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import {
  connectDb,
  insertCampaign,
  insertDevice,
  insertFirmwareManifest,
  insertFirmwarePackage,
  insertJobWithStartIntent,
  insertSite,
  racks,
  type DbHandle,
  type Device,
  type Job,
  type NewDevice,
} from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { CampaignPolicy, jobKindTable, jobKinds, type PlannedDevice, type RemediationInput } from '@fleet/domain';
import { AgentConfig } from '../src/config.js';
import {
  inputLoaders,
  MissingInventoryError,
  PermanentIntentError,
  workflowFor,
  type LoaderDeps,
} from '../src/job-inputs/index.js';
import { deviceTarget, nvosTarget, rackTargets } from '../src/job-inputs/targets.js';

const row = (name: string, fields: Partial<Device> = {}): Device =>
  ({
    id: `id-${name}`,
    name,
    nodeType: 'compute_gb200_nvidia',
    bmcUrl: `https://${name}.bmc`,
    credentialRef: 'bmc/site',
    redfishSystemId: null,
    nvosUrl: null,
    nvosSsh: null,
    nvosCredentialRef: null,
    nvosHostKey: null,
    ...fields,
  }) as Device;

/** A queued job as the dispatcher leases it; only what the loaders read. */
const jobOf = (kind: string, fields: Partial<Job> = {}): Job =>
  ({
    id: randomUUID(),
    kind,
    state: 'queued',
    siteId: 'lab',
    deviceId: null,
    rackId: null,
    params: {},
    ...fields,
  }) as Job;

/** Asserts that `promise` rejects with a permanent error of this class, code and message. */
async function rejectsWith(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => PermanentIntentError,
  code: string,
  message: string | RegExp,
): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof type, `a ${type.name}, not ${String(err)}`);
    assert.equal(err.code, code);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

describe('job inputs: the device row as a target', () => {
  it('carries the Redfish system the inventory names, to every device and rack job', () => {
    const blade = row('blade-2', { redfishSystemId: 'System_2' });
    assert.deepEqual(deviceTarget(blade), {
      deviceId: 'id-blade-2',
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: 'https://blade-2.bmc',
      credentialRef: 'bmc/site',
      redfishSystemId: 'System_2',
    });
    const rack = rackTargets([blade, row('shelf-1', { nodeType: 'powershelf_gb200_liteon' })]);
    assert.equal(rack.compute[0]?.redfishSystemId, 'System_2');
    assert.equal(rack.shelves[0]?.deviceId, 'id-shelf-1');
  });

  it('names no system when the inventory has none (the BMC must then have one host system)', () => {
    assert.equal('redfishSystemId' in deviceTarget(row('tray-1')), false);
  });

  it('throws a MissingInventoryError naming the device and each field it lacks', () => {
    assert.throws(
      () => deviceTarget(row('tray-2', { bmcUrl: null })),
      (err: unknown) =>
        err instanceof MissingInventoryError &&
        err.code === 'FAILED_PRECONDITION' &&
        err.message === 'device tray-2 has no BMC address in the inventory' &&
        err.reason === 'no BMC address in the inventory',
    );
    assert.throws(() => deviceTarget(row('tray-3', { credentialRef: null, bmcUrl: null })), {
      name: 'MissingInventoryError',
      code: 'FAILED_PRECONDITION',
      message: 'device tray-3 has no BMC address, credential reference in the inventory',
    });
    assert.throws(() => nvosTarget(row('switch-1', { nodeType: 'switch_gb200_nvidia' }), 'a switch firmware update'), {
      code: 'FAILED_PRECONDITION',
      message: 'device switch-1 has no NVOS NVUE URL, NVOS SSH endpoint in the inventory for a switch firmware update',
    });
  });

  it('a rack with devices it cannot operate names each of them, and a switch without NVOS is no problem', () => {
    assert.throws(() => rackTargets([row('tray-b', { bmcUrl: null }), row('tray-a', { credentialRef: null })]), {
      name: 'PermanentIntentError',
      code: 'FAILED_PRECONDITION',
      message: 'rack devices cannot be operated: tray-a: no credential reference; tray-b: no BMC address',
    });
    const rack = rackTargets([row('switch-2', { nodeType: 'switch_gb200_nvidia' })]);
    assert.equal(rack.switches.length, 1);
    assert.equal(rack.switchNvos, undefined, 'cold reboot asks only the switches whose NVOS it can reach');
  });
});

describe('job inputs: the registry', () => {
  const deps = {} as LoaderDeps; // never read: these jobs fail before any lookup

  it('has a loader for exactly the kinds that start a workflow', () => {
    const withWorkflow = jobKinds.filter((k) => jobKindTable[k].workflowType !== null);
    assert.deepEqual(Object.keys(inputLoaders).sort(), [...withWorkflow].sort());
    assert.ok(withWorkflow.length < jobKinds.length, 'batch.power starts no workflow of its own');
  });

  it('the dispatcher names no job kind: a new kind needs the registry and its workflow, not a dispatcher edit', () => {
    const source = readFileSync(new URL('../src/dispatcher.ts', import.meta.url), 'utf8');
    for (const kind of jobKinds) assert.equal(source.includes(kind), false, `dispatcher.ts names ${kind}`);
  });

  it('a kind whose children do the work fails for good if ever started, and so does an unknown kind', async () => {
    await rejectsWith(
      workflowFor(deps, jobOf('batch.power')),
      PermanentIntentError,
      'INVALID_ARGUMENT',
      'job kind batch.power starts no workflow of its own: its child jobs do the work',
    );
    await rejectsWith(
      workflowFor(deps, jobOf('device.teleport')),
      PermanentIntentError,
      'INVALID_ARGUMENT',
      'unknown job kind device.teleport',
    );
  });
});

// The loaders against a real Postgres: they read the inventory as it is when the job starts.
const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

describe('job inputs: loaders over the inventory', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  let deps: LoaderDeps;
  const config = AgentConfig.parse({
    metrics: { port: 0 },
    database: { url: baseUrl },
    temporal: { address: '127.0.0.1:1' },
  });
  const device = (name: string, fields: Partial<NewDevice> = {}) =>
    insertDevice(handle.db, {
      name,
      siteId: 'lab',
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: `https://${name}.bmc`,
      credentialRef: 'bmc/site',
      ...fields,
    });
  let manifestId: string;

  before(
    async () => {
      database = await cloneTestDatabase(baseUrl, template);
      handle = connectDb(database.url, 2);
      deps = { db: handle.db, config };
      await insertSite(handle.db, { id: 'lab', name: 'Lab' });
      const pkg = (await insertFirmwarePackage(handle.db, {
        digest: 'b'.repeat(64),
        sizeBytes: 2048,
        fileName: 'bmc.fwpkg',
        format: 'pldm',
        packageVersion: '1.2.3',
        metadata: {
          headerRevision: '1.0',
          headerUuid: randomUUID(),
          releaseDateTime: null,
          devices: [],
          components: [],
        },
        uploadedBy: 'test',
      }))!;
      const step = { name: 'bmc', packageId: pkg.id, targets: [], components: [{ id: 'BMC', version: '1.2.3' }] };
      const manifest = await insertFirmwareManifest(handle.db, {
        name: 'gb200',
        hardwareType: 'compute_gb200_nvidia',
        steps: [step],
        isDefault: false,
        createdBy: 'test',
      });
      manifestId = manifest.id;
    },
    { timeout: 60_000 },
  );
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  it('a device power job takes the device as a BMC target, and its workflow type from the registry', async () => {
    const d = await device('blade-2', { redfishSystemId: 'System_2' });
    const { type, input } = await workflowFor(
      deps,
      jobOf('device.power', { deviceId: d.id, params: { action: 'on' } }),
    );
    assert.equal(type, 'devicePower');
    assert.deepEqual(input, {
      jobId: (input as { jobId: string }).jobId,
      action: 'on',
      target: {
        deviceId: d.id,
        nodeType: 'compute_gb200_nvidia',
        bmcUrl: 'https://blade-2.bmc',
        credentialRef: 'bmc/site',
        redfishSystemId: 'System_2',
      },
      settleTimeoutS: config.power.settleTimeoutS,
      activity: { heartbeatTimeoutS: 30, startToCloseTimeoutS: 1800, maximumAttempts: 5 },
    });
  });

  it('a device that is gone fails NOT_FOUND; one without a BMC address or credential names what it lacks', async () => {
    const gone = randomUUID();
    for (const kind of ['device.power', 'device.bmc_reset', 'device.firmware_refresh', 'switch.factory_reset'] as const)
      await rejectsWith(
        inputLoaders[kind](deps, jobOf(kind, { deviceId: gone, params: { action: 'on' } })),
        PermanentIntentError,
        'NOT_FOUND',
        `device ${gone} no longer exists`,
      );
    const noBmc = await device('tray-nobmc', { bmcUrl: null });
    await rejectsWith(
      inputLoaders['device.power'](deps, jobOf('device.power', { deviceId: noBmc.id, params: { action: 'on' } })),
      MissingInventoryError,
      'FAILED_PRECONDITION',
      'device tray-nobmc has no BMC address in the inventory',
    );
    const noRef = await device('tray-noref', { credentialRef: null });
    await rejectsWith(
      inputLoaders['device.power_refresh'](deps, jobOf('device.power_refresh', { deviceId: noRef.id })),
      MissingInventoryError,
      'FAILED_PRECONDITION',
      'device tray-noref has no credential reference in the inventory',
    );
  });

  it('a firmware update whose manifest is gone fails naming the manifest, on a tray and on a switch', async () => {
    const tray = await device('tray-fw');
    const gone = randomUUID();
    await rejectsWith(
      inputLoaders['device.firmware_update'](
        deps,
        jobOf('device.firmware_update', { deviceId: tray.id, params: { manifest_id: gone } }),
      ),
      PermanentIntentError,
      'FAILED_PRECONDITION',
      `manifest ${gone} or one of its packages no longer exists`,
    );
    const sw = await device('switch-fw', {
      nodeType: 'switch_gb200_nvidia',
      nvosUrl: 'https://10.0.3.5',
      nvosSsh: '10.0.3.5:22',
      nvosCredentialRef: 'nvos/switch-fw',
    });
    await rejectsWith(
      inputLoaders['switch.firmware_update'](
        deps,
        jobOf('switch.firmware_update', { deviceId: sw.id, params: { manifest_id: gone } }),
      ),
      PermanentIntentError,
      'FAILED_PRECONDITION',
      `manifest ${gone} or one of its packages no longer exists`,
    );
    const input = await inputLoaders['device.firmware_update'](
      deps,
      jobOf('device.firmware_update', { deviceId: tray.id, params: { manifest_id: manifestId, force: true } }),
    );
    assert.deepEqual(
      { role: input.role, steps: input.steps.map((s) => s.packageDigest), expected: input.expectedInventory },
      { role: 'compute', steps: ['b'.repeat(64)], expected: ['BMC'] },
    );
    assert.equal(input.force, true);
  });

  it('an NVOS install refuses a package that is gone or is not an NVOS image', async () => {
    const sw = await device('switch-nvos', {
      nodeType: 'switch_gb200_nvidia',
      nvosUrl: 'https://10.0.4.5',
      nvosSsh: '10.0.4.5:22',
      nvosCredentialRef: 'nvos/switch-nvos',
    });
    const gone = randomUUID();
    const install = (packageId: string) =>
      inputLoaders['switch.nvos_install'](
        deps,
        jobOf('switch.nvos_install', { deviceId: sw.id, params: { package_id: packageId } }),
      );
    await rejectsWith(install(gone), PermanentIntentError, 'FAILED_PRECONDITION', `package ${gone} no longer exists`);
    const [{ id: pldm }] = (await handle.pool.query(`select id from firmware_packages where file_name = 'bmc.fwpkg'`))
      .rows;
    await rejectsWith(
      install(pldm),
      PermanentIntentError,
      'FAILED_PRECONDITION',
      'package bmc.fwpkg is not an NVOS image',
    );
  });

  it('a campaign fails each device it can no longer operate, with the reason, and goes on with the rest', async () => {
    const ok = await device('camp-ok');
    const noBmc = await device('camp-nobmc', { bmcUrl: null });
    const stale = await device('camp-stale');
    const campaign = await insertJobWithStartIntent(handle.db, {
      kind: 'firmware.campaign',
      siteId: 'lab',
      params: {},
      createdBy: 'test',
    });
    const goneManifest = randomUUID();
    const planned: PlannedDevice[] = [];
    for (const [d, manifest] of [
      [ok, manifestId],
      [noBmc, manifestId],
      [stale, goneManifest],
    ] as const) {
      const child = await insertJobWithStartIntent(handle.db, {
        kind: 'device.firmware_update',
        deviceId: d.id,
        siteId: 'lab',
        parentId: campaign.id,
        params: { manifest_id: manifest },
        createdBy: 'test',
      });
      planned.push({
        deviceId: d.id,
        name: d.name,
        jobId: child.id,
        rackId: null,
        powerDomain: 'pd-1',
        nodeType: 'compute_gb200_nvidia',
        manifestId: manifest,
        components: [],
      });
    }
    await insertCampaign(handle.db, {
      id: campaign.id,
      name: 'gb200 bmc',
      siteId: 'lab',
      policy: CampaignPolicy.parse({}),
      plan: {
        devices: planned,
        waves: [{ index: 0, kind: 'wave', deviceIds: planned.map((p) => p.deviceId) }],
        excluded: [],
        estimatedDurationS: 60,
      },
      createdBy: 'test',
    });
    const input = await inputLoaders['firmware.campaign'](deps, campaign);
    assert.deepEqual(
      input.devices.map((d) => d.deviceId),
      [ok.id],
    );
    assert.deepEqual(input.waves[0]?.deviceIds, [ok.id], 'the failed devices leave the waves');
    const { rows } = await handle.pool.query(
      `select d.name, j.state, j.error->>'code' as code, j.error->>'message' as message
         from jobs j join devices d on d.id = j.device_id where j.parent_id = $1 order by d.name`,
      [campaign.id],
    );
    assert.deepEqual(rows, [
      {
        name: 'camp-nobmc',
        state: 'failed',
        code: 'FAILED_PRECONDITION',
        message: 'camp-nobmc: no BMC address in the inventory',
      },
      { name: 'camp-ok', state: 'queued', code: null, message: null },
      {
        name: 'camp-stale',
        state: 'failed',
        code: 'FAILED_PRECONDITION',
        message: `camp-stale: manifest ${goneManifest} or a package of it is gone`,
      },
    ]);
  });
  it("a remediation gets its steps' plans: the rack's shelves and unheld devices, manifest, tray tests", async () => {
    const rack = (
      await handle.db.insert(racks).values({ siteId: 'lab', name: 'r-ac', rackType: 'gb200_nvl72' }).returning()
    )[0]!;
    const bare = (
      await handle.db.insert(racks).values({ siteId: 'lab', name: 'r-bare', rackType: 'gb200_nvl72' }).returning()
    )[0]!;
    const tray = await device('ac-ct1', { rackId: rack.id });
    const shelf = await device('ac-ps1', { rackId: rack.id, nodeType: 'powershelf_gb200_liteon' });
    const serving = await device('ac-ct2', { rackId: rack.id, fleetLifecycle: 'in_service' });
    await device('ac-ct3', { rackId: rack.id, fleetLifecycle: 'quarantined' });
    await device('ac-panel', { rackId: rack.id, nodeType: null });
    const params = (steps: string[]) => ({
      reason: 'gpu-fault',
      fault: { class: 'gpu', component: 'GPU_1', severity: 'Critical', message: 'off the bus' },
      playbook: { steps },
      return_to: 'in_service',
      already_quarantined: false,
    });
    const load = async (d: Device, steps: string[]) =>
      (await workflowFor(deps, jobOf('device.remediate', { deviceId: d.id, params: params(steps) })))
        .input as RemediationInput;

    const all = await load(tray, ['hmc_reset', 'ac_cycle', 'firmware_reflash', 'burn_in']);
    assert.deepEqual(
      all.acCycle?.shelves.map((t) => t.deviceId),
      [shelf.id],
    );
    assert.deepEqual(
      all.acCycle?.others.map((o) => o.name),
      ['ac-ct2'],
      'held and unmanaged devices are left out',
    );
    assert.equal(all.acCycle?.others[0]?.target.deviceId, serving.id);
    assert.equal(all.acCycle?.refused, undefined);
    assert.equal(all.firmware, undefined, 'no default manifest for the type: the step will skip');
    assert.deepEqual(all.burnIn?.tests, ['gpu_stress', 'memory'], 'the rack test needs the whole NVLink domain');
    assert.equal(all.siteId, 'lab');
    // Only what the playbook uses travels in the input.
    const resets = await load(tray, ['hmc_reset']);
    assert.deepEqual([resets.acCycle, resets.firmware, resets.burnIn], [undefined, undefined, undefined]);

    const refused = async (d: Device) => (await load(d, ['ac_cycle'])).acCycle?.refused;
    assert.equal(await refused(await device('ac-loose')), 'ac-loose is in no rack: no power shelf feeds it');
    assert.equal(
      await refused(await device('ac-bare', { rackId: bare.id })),
      "no power shelf in ac-bare's rack feeds it",
    );
    assert.equal(await refused(shelf), 'ac-ps1 is a power shelf: no shelf feeds it');
    await device('ac-ct4', { rackId: rack.id, credentialRef: null });
    assert.equal(
      await refused(tray),
      'devices on the same shelves cannot be operated or checked: ac-ct4 (no credential reference)',
    );
  });
});

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { insertSite, type DbHandle } from '@fleet/db';
import { buildFwpkg, DESCRIPTOR_UUID } from '@fleet/fwpkg';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// NVOS images in the catalog, switch trays' NVOS endpoints, and the install intent, against a real Postgres.
const IMAGE = 'nvos-amd64-25.06.1000.bin';

describe('hub: NVOS images and switch installs', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let blobDir: string;
  let tokens: TestHub['tokens'];
  const image = randomBytes(64 * 1024);
  let imageId = '';
  let pldmId = '';
  let switchId = '';

  before(async () => {
    hub = await startTestHub({ maxPackageBytes: 1 << 20 });
    ({ handle, app, tokens } = hub);
    blobDir = hub.blobDir!;
    await insertSite(handle.db, { id: 'sw1', name: 'Switch site' });
  });
  after(() => hub.close());

  const auth = (role: keyof typeof tokens) => ({ authorization: `Bearer ${tokens[role]}` });
  const upload = (payload: Buffer, query: string) =>
    app.inject({
      method: 'POST',
      url: `/v1/firmware/packages?${query}`,
      headers: { ...auth('operator'), 'content-type': 'application/octet-stream' },
      payload,
    });
  const post = (url: string, role: keyof typeof tokens, body: object, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url, headers: { ...auth(role), ...headers }, payload: body });
  const switchTray = (name: string, extra: object = {}) => ({
    name,
    site_id: 'sw1',
    node_type: 'switch_gb200_nvidia',
    bmc_url: 'https://10.0.0.4',
    credential_ref: 'bmc/sw',
    nvos_url: 'https://10.0.0.5',
    nvos_ssh: '10.0.0.5:22',
    ...extra,
  });

  it('stores an NVOS image as-is under its sha256, with the build id its file name carries', async () => {
    const res = await upload(image, `file_name=${IMAGE}&format=nvos`);
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    imageId = body.id;
    assert.equal(body.digest, createHash('sha256').update(image).digest('hex'));
    assert.deepEqual(
      [body.format, body.build_id, body.package_version, body.size_bytes],
      ['nvos', '25.06.1000', '25.06.1000', image.length],
    );
    assert.equal(body.header, undefined, 'no PLDM header');
    const pldm = buildFwpkg({
      revision: '1.3',
      packageVersion: '1.0.0',
      devices: [
        {
          descriptors: [{ type: DESCRIPTOR_UUID, data: '0123456789abcdef0123456789abcdef' }],
          applicableComponents: [0],
          imageSetVersion: 'set',
        },
      ],
      components: [{ classification: 0x000a, identifier: 1, version: 'bmc-1.0.0', image: { size: 512, fill: 1 } }],
    });
    const defaulted = await upload(pldm, 'file_name=tray.fwpkg');
    assert.equal(defaulted.statusCode, 201, defaulted.body);
    assert.equal(defaulted.json().format, 'pldm', 'PLDM stays the default');
    pldmId = defaulted.json().id;
  });

  it('refuses an image whose name does not give exactly one build id, before storing a byte', async () => {
    for (const name of ['nvos-amd64.bin', 'nvos-25.06.1000-to-25.07.1.bin']) {
      const res = await upload(image, `file_name=${name}&format=nvos`);
      assert.equal(res.statusCode, 400, name);
      assert.equal(res.json().error.details[0].field, 'query.file_name');
      assert.match(res.json().error.message, /exactly one X\.Y\.Z/);
    }
    assert.deepEqual(await readdir(join(blobDir, 'tmp')), []);
  });

  it('a manifest cannot name an NVOS image', async () => {
    const res = await post('/v1/firmware/manifests', 'operator', {
      name: 'wrong',
      hardware_type: 'switch_gb200_nvidia',
      steps: [{ name: 'os', package_id: imageId, components: [{ id: 'NVOS', version: '25.06.1000' }] }],
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error.message, /is an NVOS image, not a PLDM package/);
  });

  it('registers switch trays with their NVOS endpoints; other trays have none', async () => {
    const res = await post(
      '/v1/devices',
      'admin',
      switchTray('sw-a', { nvos_credential_ref: 'nvos/sw', nvos_host_key: `SHA256:${'A'.repeat(43)}` }),
    );
    assert.equal(res.statusCode, 201, res.body);
    switchId = res.json().id;
    const body = res.json();
    assert.deepEqual(
      [body.nvos_url, body.nvos_ssh, body.nvos_credential_ref, body.nvos_host_key],
      ['https://10.0.0.5', '10.0.0.5:22', 'nvos/sw', `SHA256:${'A'.repeat(43)}`],
    );
    const compute = await post('/v1/devices', 'admin', { ...switchTray('c-a'), node_type: 'compute_gb200_nvidia' });
    assert.equal(compute.statusCode, 400);
    assert.deepEqual(
      compute
        .json()
        .error.details.map((d: { field: string }) => d.field)
        .sort(),
      ['body.nvos_ssh', 'body.nvos_url'],
    );
    const badSsh = await post('/v1/devices', 'admin', switchTray('sw-b', { nvos_ssh: '10.0.0.5' }));
    assert.equal(badSsh.statusCode, 400);
    assert.equal(badSsh.json().error.details[0].field, 'body.nvos_ssh');
  });

  it(`POST /v1/devices/{id}/nvos-install: 202 with the job; the same Idempotency-Key replays it; a second install \
while it runs is 409`, async () => {
    const first = await post(
      `/v1/devices/${switchId}/nvos-install`,
      'operator',
      { package_id: imageId },
      { 'idempotency-key': 'nvos-1', 'x-request-id': 'nvos-req-1' },
    );
    assert.equal(first.statusCode, 202, first.body);
    const job = first.json();
    assert.deepEqual(
      [job.kind, job.state, job.target.device_id, job.params],
      ['switch.nvos_install', 'queued', switchId, { package_id: imageId, build_id: '25.06.1000' }],
    );
    const intent = await handle.pool.query('select kind from intents where job_id = $1', [job.id]);
    assert.deepEqual(intent.rows, [{ kind: 'start' }]);
    const audit = await handle.pool.query("select action, target from audit_log where request_id = 'nvos-req-1'");
    assert.deepEqual(audit.rows, [{ action: 'switch.nvos_install', target: `device/${switchId}` }]);
    const replay = await post(
      `/v1/devices/${switchId}/nvos-install`,
      'operator',
      { package_id: imageId },
      { 'idempotency-key': 'nvos-1' },
    );
    assert.equal(replay.json().id, job.id);
    const busy = await post(`/v1/devices/${switchId}/nvos-install`, 'operator', { package_id: imageId });
    assert.equal(busy.statusCode, 409);
    assert.equal(busy.json().error.code, 'CONFLICT');
  });

  it('refuses devices without an NVOS endpoint and packages that are not NVOS images', async () => {
    const bare = (
      await post('/v1/devices', 'admin', {
        name: 'sw-bare',
        site_id: 'sw1',
        node_type: 'switch_gb200_nvidia',
        bmc_url: 'https://10.0.0.6',
        credential_ref: 'bmc/sw',
      })
    ).json();
    const noEndpoint = await post(`/v1/devices/${bare.id}/nvos-install`, 'operator', { package_id: imageId });
    assert.equal(noEndpoint.statusCode, 409);
    assert.match(noEndpoint.json().error.message, /no NVOS NVUE URL, NVOS SSH endpoint/);
    const other = (await post('/v1/devices', 'admin', switchTray('sw-c'))).json();
    const pldm = await post(`/v1/devices/${other.id}/nvos-install`, 'operator', { package_id: pldmId });
    assert.equal(pldm.statusCode, 409);
    assert.match(pldm.json().error.message, /is a pldm package, not an NVOS image/);
    const missing = await post(`/v1/devices/${other.id}/nvos-install`, 'operator', {
      package_id: '00000000-0000-4000-8000-000000000000',
    });
    assert.equal(missing.statusCode, 400);
    assert.equal(
      (await post(`/v1/devices/${other.id}/nvos-install`, 'viewer', { package_id: imageId })).statusCode,
      403,
    );
  });
  it(`switch operations: factory reset needs admin and the device name as confirmation; rotation and certificates need \
admin; firmware steps must name switch components`, async () => {
    const sw = (
      await post('/v1/devices', 'admin', switchTray('sw-ops', { nvos_credential_ref: 'nvos/sw-ops' }))
    ).json();
    assert.equal(
      (await post(`/v1/devices/${sw.id}/nvos-factory-reset`, 'operator', { confirm: 'sw-ops' })).statusCode,
      403,
    );
    const wrong = await post(`/v1/devices/${sw.id}/nvos-factory-reset`, 'admin', { confirm: 'sw-other' });
    assert.equal(wrong.statusCode, 400);
    assert.equal(wrong.json().error.details[0].field, 'body.confirm');
    const reset = await post(`/v1/devices/${sw.id}/nvos-factory-reset`, 'admin', { confirm: 'sw-ops' });
    assert.equal(reset.statusCode, 202, reset.body);
    assert.equal(reset.json().kind, 'switch.factory_reset');
    await handle.pool.query(`update jobs set state = 'succeeded' where id = $1`, [reset.json().id]);

    assert.equal((await post(`/v1/devices/${sw.id}/nvos-password-rotation`, 'operator', {})).statusCode, 403);
    const rotation = await post(`/v1/devices/${sw.id}/nvos-password-rotation`, 'admin', {});
    assert.equal(rotation.statusCode, 202, rotation.body);
    assert.equal(rotation.json().kind, 'switch.password_rotation');
    assert.deepEqual(rotation.json().params ?? {}, {}, 'no secret in the job');
    await handle.pool.query(`update jobs set state = 'succeeded' where id = $1`, [rotation.json().id]);

    assert.equal((await post(`/v1/devices/${sw.id}/nvos-certificate`, 'admin', { domain: '../etc' })).statusCode, 400);
    const cert = await post(`/v1/devices/${sw.id}/nvos-certificate`, 'admin', { domain: 'site-a' });
    assert.equal(cert.statusCode, 202, cert.body);
    await handle.pool.query(`update jobs set state = 'succeeded' where id = $1`, [cert.json().id]);

    const pkg = (
      await upload(
        buildFwpkg({
          revision: '1.0',
          packageVersion: 'bmc-2.0.0',
          devices: [
            {
              descriptors: [{ type: DESCRIPTOR_UUID, data: '00112233445566778899aabbccddeeff' }],
              applicableComponents: [0],
              imageSetVersion: 's',
            },
          ],
          components: [{ classification: 10, identifier: 1, version: '2.0.0', image: { size: 64 } }],
        }),
        'file_name=sw-bmc-2.0.0.fwpkg',
      )
    ).json();
    const manifest = (name: string, step: string) =>
      post('/v1/firmware/manifests', 'operator', {
        name,
        hardware_type: 'switch_gb200_nvidia',
        steps: [{ name: step, package_id: pkg.id, targets: [], components: [{ id: 'bmc', version: '2.0.0' }] }],
      });
    const good = (await manifest('sw-fw-good', 'bmc')).json();
    const bad = (await manifest('sw-fw-bad', 'main')).json();
    const refused = await post(`/v1/devices/${sw.id}/switch-firmware-update`, 'operator', { manifest_id: bad.id });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().error.details[0].field, 'body.manifest_id');
    const update = await post(`/v1/devices/${sw.id}/switch-firmware-update`, 'operator', { manifest_id: good.id });
    assert.equal(update.statusCode, 202, update.body);
    assert.equal(update.json().kind, 'switch.firmware_update');
  });
  it(`NVOS password rotation: 409 unless the switch has a reference of its own, for NVOS only; 202 when it \
does`, async () => {
    const tray = async (name: string, extra: object = {}) =>
      (await post('/v1/devices', 'admin', switchTray(name, extra))).json().id as string;
    const rotate = (id: string) => post(`/v1/devices/${id}/nvos-password-rotation`, 'admin', {});
    const refused = async (id: string, why: RegExp) => {
      const res = await rotate(id);
      assert.equal(res.statusCode, 409, res.body);
      const { error } = res.json();
      assert.equal(error.code, 'FAILED_PRECONDITION');
      assert.match(error.message, why);
      assert.match(
        error.message,
        /NetBox custom field fleet_nvos_credential_ref, or nvos_credential_ref on POST \/v1\/devices/,
      );
      assert.equal(error.details[0].field, 'nvos_credential_ref');
    };
    const jobsOf = async (id: string) =>
      (await handle.pool.query("select id from jobs where device_id = $1 and kind = 'switch.password_rotation'", [id]))
        .rowCount;

    // No NVOS reference: NVOS logs in with the BMC's, which the rotation would overwrite.
    const fallback = await tray('sw-rot-fallback');
    await refused(
      fallback,
      /sw-rot-fallback has no NVOS credential reference of its own \(it logs in with its BMC's, bmc\/sw\)/,
    );
    // The BMC reference of every other tray in the site (bmc/sw), named as NVOS reference.
    const asBmc = await tray('sw-rot-bmc', { credential_ref: 'bmc/sw-rot-bmc', nvos_credential_ref: 'bmc/sw' });
    await refused(asBmc, /credential reference bmc\/sw of sw-rot-bmc is also used by the BMC of sw-a, /);
    // Its own BMC's reference, spelled out.
    const ownBmc = await tray('sw-rot-own-bmc', {
      credential_ref: 'bmc/sw-rot-own-bmc',
      nvos_credential_ref: 'bmc/sw-rot-own-bmc',
    });
    await refused(ownBmc, /is also used by the BMC of sw-rot-own-bmc/);
    // Another switch's NVOS reference.
    const [first, second] = [
      await tray('sw-rot-shared-1', { nvos_credential_ref: 'nvos/shared' }),
      await tray('sw-rot-shared-2', { nvos_credential_ref: 'nvos/shared' }),
    ];
    await refused(first, /is also used by the NVOS of sw-rot-shared-2/);
    await refused(second, /is also used by the NVOS of sw-rot-shared-1/);
    for (const id of [fallback, asBmc, ownBmc, first, second])
      assert.equal(await jobsOf(id), 0, 'a refused rotation leaves no job');

    const own = await tray('sw-rot-own', { nvos_credential_ref: 'nvos/sw-rot-own' });
    const accepted = await rotate(own);
    assert.equal(accepted.statusCode, 202, accepted.body);
    assert.equal(accepted.json().kind, 'switch.password_rotation');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { z } from 'zod';
import {
  deviceFirmware,
  insertDevice,
  inventoryIssues,
  racks,
  setCondition,
  setLifecycle,
  syncState,
  type DbHandle,
} from '@fleet/db';
import { buildFwpkg, DESCRIPTOR_UUID } from '@fleet/fwpkg';
import { openapiDocument } from '../src/openapi.js';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// /openapi.json documents every success body (the zod schemas that shape it), /docs serves it as a page, and real
// answers from a seeded database hold to the documented schemas.

type Operation = { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> };
type OpenApi = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

/** The firmware package the catalog routes answer about: one device record, two component images. */
const fwpkg = buildFwpkg({
  revision: '1.3',
  packageVersion: '1.0.0',
  releaseDateTime: new Date('2025-03-04T05:06:07Z'),
  devices: [
    {
      descriptors: [{ type: DESCRIPTOR_UUID, data: '0123456789abcdef0123456789abcdef' }],
      applicableComponents: [0, 1],
      imageSetVersion: 'set-1.0.0',
    },
  ],
  components: [
    { classification: 0x000a, identifier: 0x0001, version: 'bmc-1.0.0', image: { data: Buffer.from('bmc') } },
    { classification: 0x000a, identifier: 0x0002, version: 'hmc-1.0.0', image: { data: Buffer.from('hmc') } },
  ],
});

describe('hub OpenAPI document and /docs', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let tokens: TestHub['tokens'];
  let openapi: OpenApi;

  before(async () => {
    hub = await startTestHub({ maxPackageBytes: 1 << 20 });
    ({ handle, app, tokens } = hub);
    openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  after(() => hub.close());

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown, token = tokens.admin) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });

  /** Parses an answer with the zod schema its route documents for its status; parsing must drop nothing. */
  const assertConforms = (method: string, path: string, res: LightMyRequestResponse) => {
    const reply = app.apiDoc.reply(method, path, res.statusCode);
    assert.ok(
      reply && 'body' in reply && typeof reply.body !== 'string',
      `${method} ${path} documents no ${res.statusCode}`,
    );
    const body: unknown = res.json();
    const parsed = (reply.body as z.ZodType).safeParse(body);
    assert.ok(parsed.success, `${method} ${path}: ${parsed.error?.message}\n${res.body}`);
    assert.deepEqual(parsed.data, body, `${method} ${path}: the answer has fields its schema does not name`);
  };

  it('every success that carries a body documents its content schema, every failure the Error schema', () => {
    const operations = Object.entries(openapi.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
    );
    assert.ok(operations.length >= 45, `only ${operations.length} operations`);
    for (const { name, op } of operations) {
      const statuses = Object.keys(op.responses).map(Number);
      assert.ok(
        statuses.some((s) => s >= 200 && s < 300),
        `${name} documents no success`,
      );
      for (const status of statuses) {
        const content = op.responses[status]!.content;
        if (status === 204 || status === 304) {
          assert.equal(content, undefined, `${name} ${status} has no body`);
          continue;
        }
        const media = Object.values(content ?? {});
        assert.ok(media.length === 1 && media[0]!.schema, `${name} ${status} documents no content schema`);
        if (status >= 400) assert.deepEqual(media[0]!.schema, { $ref: '#/components/schemas/Error' }, name);
      }
    }
    for (const id of ['Job', 'JobPage', 'Device', 'DevicePage', 'Site', 'Rack', 'Error'])
      assert.ok(openapi.components.schemas[id], `components.schemas.${id}`);
  });

  it('every $ref names a component', () => {
    const refs = [...JSON.stringify(openapi).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      assert.match(ref, /^#\/components\/schemas\//);
      assert.ok(openapi.components.schemas[ref.split('/').at(-1)!], ref);
    }
  });

  it('the document the CLI prints, built without a database, is the one the hub serves', async () => {
    assert.deepEqual(await openapiDocument(), openapi);
  });

  it('/docs serves the interactive page without a token, and its scripts and styles from the hub itself', async () => {
    let res = await app.inject({ method: 'GET', url: '/docs' });
    for (let hops = 0; res.statusCode >= 300 && res.statusCode < 400 && hops < 3; hops++)
      res = await app.inject({ method: 'GET', url: new URL(res.headers.location!, 'http://hub/docs').pathname });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    const assets = [...res.body.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), res.body);
    for (const asset of assets) {
      assert.doesNotMatch(asset, /^(https?:)?\/\//, 'assets come from the hub, not a CDN');
      const url = new URL(asset, 'http://hub/docs/').pathname;
      const got = await app.inject({ method: 'GET', url });
      assert.equal(got.statusCode, 200, `${url}: ${got.statusCode}`);
      assert.ok(got.rawPayload.length > 0, url);
    }
    const spec = await app.inject({ method: 'GET', url: '/docs/json' });
    assert.equal(spec.statusCode, 200);
    assert.deepEqual(spec.json(), openapi);
  });

  it('answers from a seeded database hold to the schemas their routes document', async () => {
    const { db } = handle;
    await db.insert(syncState).values({ scope: 'netbox', sourceUrl: 'http://netbox.test', stale: false });
    assertConforms('POST', '/v1/sites', await call('POST', '/v1/sites', { id: 'lab', name: 'Lab' }));
    const [rack] = await db
      .insert(racks)
      .values({ siteId: 'lab', name: 'rack-1', rackType: 'gb200_nvl72' })
      .returning();
    const tray = await insertDevice(db, {
      name: 'tray-1',
      siteId: 'lab',
      rackId: rack!.id,
      position: 10,
      role: 'compute-tray',
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: 'http://127.0.0.1:9101',
      credentialRef: 'bmc/default',
      netboxId: 41,
      netboxLastUpdated: new Date(),
      lastSyncedAt: new Date(),
    });
    await db.insert(deviceFirmware).values({ deviceId: tray.id, componentId: 'BMC', version: 'bmc-0.9' });
    // Fleet's lifecycle moved and a condition not True: device and rack reads carry both, and the history lists them.
    await setLifecycle(db, {
      deviceId: tray.id,
      to: 'enrolling',
      writer: 'lifecycle-workflow',
      jobId: '00000000-0000-4000-8000-000000000001',
      reason: 'EnrolmentStarted',
    });
    await setCondition(db, {
      deviceId: tray.id,
      type: 'BMCReachable',
      status: 'False',
      reason: 'ConnectionRefused',
      message: 'no answer',
      writer: 'satellite',
    });
    await db.insert(inventoryIssues).values({
      objectType: 'dcim.device',
      netboxId: 41,
      deviceId: tray.id,
      code: 'duplicate_ip',
      message: 'an address on two devices',
    });
    const shelf = await call('POST', '/v1/devices', {
      name: 'shelf-1',
      site_id: 'lab',
      node_type: 'powershelf_gb200_liteon',
      bmc_url: 'http://127.0.0.1:9100',
      credential_ref: 'bmc/default',
    });
    assertConforms('POST', '/v1/devices', shelf);

    const upload = await app.inject({
      method: 'POST',
      url: '/v1/firmware/packages?file_name=tray.fwpkg',
      headers: { authorization: `Bearer ${tokens.operator}`, 'content-type': 'application/octet-stream' },
      payload: fwpkg,
    });
    assertConforms('POST', '/v1/firmware/packages', upload);
    const nvos = await app.inject({
      method: 'POST',
      url: '/v1/firmware/packages?file_name=nvos-amd64-25.02.2553.bin&format=nvos',
      headers: { authorization: `Bearer ${tokens.operator}`, 'content-type': 'application/octet-stream' },
      payload: Buffer.from('an NVOS image'),
    });
    assertConforms('POST', '/v1/firmware/packages', nvos);
    const manifest = await call('POST', '/v1/firmware/manifests', {
      name: 'gb200-compute-1.0',
      hardware_type: 'compute_gb200_nvidia',
      default: true,
      steps: [{ name: 'main', package_id: upload.json().id, components: [{ id: 'BMC', version: 'bmc-1.0.0' }] }],
    });
    assertConforms('POST', '/v1/firmware/manifests', manifest);
    const windows = await call('PUT', '/v1/sites/lab/maintenance-windows', {
      windows: [{ weekdays: [1, 2], start: '22:00', duration_minutes: 240 }],
    });
    assertConforms('PUT', '/v1/sites/{id}/maintenance-windows', windows);

    const power = await call('POST', `/v1/devices/${shelf.json().id}/power`, { action: 'on' });
    assertConforms('POST', '/v1/devices/{id}/power', power);
    const dryRun = await call('POST', '/v1/firmware-campaigns', { name: 'c0', site_id: 'lab', dry_run: true });
    assertConforms('POST', '/v1/firmware-campaigns', dryRun);
    const campaign = await call('POST', '/v1/firmware-campaigns', { name: 'c1', site_id: 'lab' });
    assertConforms('POST', '/v1/firmware-campaigns', campaign);
    const batch = await call('POST', '/v1/power-batches', { action: 'off', site_id: 'lab' });
    assertConforms('POST', '/v1/power-batches', batch);
    assert.equal(batch.json().result.refused.length, 2, 'both devices are busy: the result lists them');

    const gets: [string, string][] = [
      ['/v1/sites', '/v1/sites'],
      ['/v1/sites/{id}', '/v1/sites/lab'],
      ['/v1/racks', '/v1/racks'],
      ['/v1/racks/{id}', `/v1/racks/${rack!.id}`],
      ['/v1/devices', '/v1/devices'],
      ['/v1/devices/{id}', `/v1/devices/${tray.id}`],
      ['/v1/devices/{id}/history', `/v1/devices/${tray.id}/history`],
      ['/v1/inventory-issues', '/v1/inventory-issues'],
      ['/v1/jobs', '/v1/jobs?limit=1'],
      ['/v1/jobs', `/v1/jobs?parent_id=${campaign.json().id}`],
      ['/v1/jobs/{id}', `/v1/jobs/${batch.json().id}`],
      ['/v1/jobs/{id}', `/v1/jobs/${power.json().id}`],
      ['/v1/firmware/packages', '/v1/firmware/packages'],
      ['/v1/firmware/packages/{id}', `/v1/firmware/packages/${upload.json().id}`],
      ['/v1/firmware/manifests', '/v1/firmware/manifests'],
      ['/v1/firmware/manifests/{id}', `/v1/firmware/manifests/${manifest.json().id}`],
      ['/v1/firmware/compliance', '/v1/firmware/compliance'],
      ['/v1/firmware/compliance/summary', '/v1/firmware/compliance/summary'],
      ['/v1/firmware-campaigns', '/v1/firmware-campaigns'],
      ['/v1/firmware-campaigns/{id}', `/v1/firmware-campaigns/${campaign.json().id}`],
      ['/v1/firmware-campaigns/{id}/devices', `/v1/firmware-campaigns/${campaign.json().id}/devices`],
      ['/v1/sites/{id}/maintenance-windows', '/v1/sites/lab/maintenance-windows'],
      ['/v1/hardware', '/v1/hardware'],
      ['/v1/job-kinds', '/v1/job-kinds'],
      ['/v1/whoami', '/v1/whoami'],
      ['/v1/audit', '/v1/audit'],
    ];
    for (const [path, url] of gets) {
      const res = await call('GET', url, undefined, tokens.viewer);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assertConforms('GET', path, res);
    }
    assertConforms('POST', '/v1/jobs/{id}/cancel', await call('POST', `/v1/jobs/${power.json().id}/cancel`));
  });
});

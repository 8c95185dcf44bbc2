import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { insertDevice, insertSite, type DbHandle } from '@fleet/db';
import { buildFwpkg, DESCRIPTOR_UUID, type FwpkgSpec } from '@fleet/fwpkg';
import type { FileBlobStore } from '../src/firmware/blob-store.js';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

// The firmware catalog against a real Postgres and a blob store in a temp directory.
const maxPackageBytes = 256 * 1024;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A GB200 compute tray package: BMC and HMC images with the versions a manifest will name. */
function trayPackage(packageVersion: string, imageBytes = 4096): FwpkgSpec {
  return {
    revision: '1.3',
    packageVersion,
    releaseDateTime: new Date('2025-03-04T05:06:07Z'),
    devices: [
      {
        descriptors: [{ type: DESCRIPTOR_UUID, data: '0123456789abcdef0123456789abcdef' }],
        applicableComponents: [0, 1],
        imageSetVersion: `set-${packageVersion}`,
      },
    ],
    components: [
      {
        classification: 0x000a,
        identifier: 0x0001,
        comparisonStamp: 0x0102,
        version: `bmc-${packageVersion}`,
        image: { size: imageBytes, fill: 0x5a },
      },
      {
        classification: 0x000a,
        identifier: 0x0002,
        version: `hmc-${packageVersion}`,
        image: { data: Buffer.from('hmc image bytes') },
      },
    ],
  };
}

describe('hub firmware catalog', () => {
  let hub: TestHub;
  let handle: DbHandle;
  let app: FastifyInstance;
  let blobDir: string;
  let blobs: FileBlobStore;
  let tokens: TestHub['tokens'];
  const good = buildFwpkg(trayPackage('1.0.0'));
  const goodDigest = sha256(good);
  let goodId = '';

  before(async () => {
    hub = await startTestHub({ maxPackageBytes });
    ({ handle, app, tokens } = hub);
    [blobDir, blobs] = [hub.blobDir!, hub.blobs!];
  });
  after(() => hub.close());

  const auth = (role: keyof typeof tokens) => ({ authorization: `Bearer ${tokens[role]}` });
  const upload = (payload: Buffer | Readable, fileName = 'tray.fwpkg', headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: `/v1/firmware/packages?file_name=${fileName}`,
      headers: { ...auth('operator'), 'content-type': 'application/octet-stream', ...headers },
      payload,
    });
  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    role: keyof typeof tokens,
    opts: { body?: object; headers?: Record<string, string> } = {},
  ) =>
    app.inject({
      method,
      url,
      headers: { ...auth(role), ...opts.headers },
      ...(opts.body ? { payload: opts.body } : {}),
    });
  /** Every file under the blob directory (tmp and sha256 alike). */
  const storedFiles = async () =>
    (await readdir(blobDir, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name))
      .sort();
  const packageCount = async () =>
    (await handle.pool.query('select count(*)::int as n from firmware_packages')).rows[0].n as number;

  describe('upload', () => {
    it('201 with the parsed header; the blob is on disk under its sha256; an audit row', async () => {
      const res = await upload(good, 'tray.fwpkg', { 'x-request-id': 'fw-up-1' });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      goodId = body.id;
      assert.equal(body.digest, goodDigest);
      assert.equal(body.size_bytes, good.length);
      assert.equal(body.file_name, 'tray.fwpkg');
      assert.equal(body.package_version, '1.0.0');
      assert.deepEqual(body.header, {
        revision: '1.3',
        uuid: '7b291c99-6db6-4208-801b-02026e463c78',
        release_date_time: '2025-03-04T05:06:07.000Z',
      });
      assert.deepEqual(body.devices, [
        {
          descriptors: [{ type: DESCRIPTOR_UUID, data: '0123456789abcdef0123456789abcdef' }],
          applicable_components: [0, 1],
          image_set_version: 'set-1.0.0',
        },
      ]);
      assert.deepEqual(
        body.components.map((c: { version: string; size: number; comparison_stamp: number }) => [
          c.version,
          c.size,
          c.comparison_stamp,
        ]),
        [
          ['bmc-1.0.0', 4096, 0x0102],
          ['hmc-1.0.0', 15, 0xffffffff],
        ],
      );
      const bmc = body.components[0];
      assert.equal(bmc.sha256, sha256(good.subarray(bmc.offset, bmc.offset + bmc.size)));
      assert.equal(res.headers['location'], `/v1/firmware/packages/${goodId}`);
      assert.equal(res.headers['etag'], `"${goodDigest}"`);
      assert.equal(body.uploaded_by, 't-operator');
      assert.equal(sha256(await readFile(blobs.pathOf(goodDigest))), goodDigest);
      assert.equal(blobs.pathOf(goodDigest), join(blobDir, 'sha256', goodDigest.slice(0, 2), goodDigest));
      assert.deepEqual(await readdir(join(blobDir, 'tmp')), []);
      const audit = await handle.pool.query(
        "select action, outcome, status_code, target from audit_log where request_id = 'fw-up-1'",
      );
      assert.deepEqual(audit.rows, [
        {
          action: 'firmware.package.upload',
          outcome: 'accepted',
          status_code: 201,
          target: `firmware_package/${goodId}`,
        },
      ]);
    });

    it('the same bytes again (even streamed, under another name) answer 200 with the same package', async () => {
      const again = await upload(Readable.from([good.subarray(0, 100), good.subarray(100)]), 'renamed.fwpkg');
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().id, goodId);
      assert.equal(again.json().file_name, 'tray.fwpkg');
      assert.equal(await packageCount(), 1);
      assert.deepEqual(await storedFiles(), [blobs.pathOf(goodDigest)]);
    });

    it('a corrupted header is 400 naming PackageHeaderChecksum and its offset; nothing is stored', async () => {
      const before = await storedFiles();
      const bad = Buffer.from(good);
      bad[40] = bad[40]! ^ 0xff; // inside the header: its CRC no longer matches
      const res = await upload(bad);
      assert.equal(res.statusCode, 400);
      const { error } = res.json();
      assert.equal(error.code, 'INVALID_ARGUMENT');
      assert.equal(error.details[0].field, 'body.PackageHeaderChecksum');
      assert.match(error.message, /PackageHeaderChecksum at byte \d+/);
      assert.deepEqual(await storedFiles(), before);
      assert.equal(await packageCount(), 1);
    });

    it('a truncated image is 400 naming ComponentSize and its offset; nothing is stored', async () => {
      const before = await storedFiles();
      const res = await upload(Buffer.from(good.subarray(0, good.length - 2000)));
      assert.equal(res.statusCode, 400);
      const { error } = res.json();
      assert.equal(error.details[0].field, 'body.ComponentSize');
      assert.match(error.message, /ComponentSize at byte \d+: the image ends at byte \d+, the package has \d+ bytes/);
      assert.deepEqual(await storedFiles(), before);
    });

    it('a body that is no package at all (cut inside the header) is 400, and an empty one too', async () => {
      for (const payload of [good.subarray(0, 30), Buffer.alloc(0)]) {
        const res = await upload(Buffer.from(payload));
        assert.equal(res.statusCode, 400, res.body);
        assert.match(res.json().error.details[0].field, /^body\./);
      }
      assert.deepEqual(await readdir(join(blobDir, 'tmp')), []);
    });

    it(`413 over firmware.maxPackageBytes: declared up front, or found while streaming; nothing is \
stored`, async () => {
      const before = await storedFiles();
      const big = buildFwpkg(trayPackage('9.9.9', maxPackageBytes));
      const declared = await upload(big);
      assert.equal(declared.statusCode, 413);
      assert.equal(declared.json().error.code, 'INVALID_ARGUMENT');
      assert.match(declared.json().error.message, /firmware\.maxPackageBytes = 262144/);
      const streamed = await upload(Readable.from([big.subarray(0, 200_000), big.subarray(200_000)]));
      assert.equal(streamed.statusCode, 413);
      assert.deepEqual(await storedFiles(), before);
    });

    it('400 for a bad file_name, a missing body or a JSON body; 403 for a viewer', async () => {
      assert.equal((await upload(good, '..')).json().error.details[0].field, 'query.file_name');
      assert.equal((await upload(good, 'a%2Fb')).statusCode, 400);
      assert.equal((await upload(good, 'x'.repeat(256))).statusCode, 400);
      const json = await app.inject({
        method: 'POST',
        url: '/v1/firmware/packages?file_name=a',
        headers: auth('operator'),
        payload: { x: 1 },
      });
      assert.equal(json.statusCode, 400);
      assert.equal(json.json().error.details[0].field, 'body');
      const viewer = await app.inject({
        method: 'POST',
        url: '/v1/firmware/packages?file_name=a',
        headers: { ...auth('viewer'), 'content-type': 'application/octet-stream' },
        payload: good,
      });
      assert.equal(viewer.statusCode, 403);
    });

    it('a client that disconnects mid-upload leaves nothing behind', async () => {
      const address = await app.listen({ host: '127.0.0.1', port: 0 });
      const before = await storedFiles();
      const pkg = buildFwpkg(trayPackage('2.0.0', 200_000));
      const { port } = new URL(address);
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /v1/firmware/packages?file_name=cut.fwpkg HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ` +
          `Bearer ${tokens.operator}\r\ncontent-type: application/octet-stream\r\ncontent-length: ` +
          `${pkg.length}\r\n\r\n`,
      );
      socket.write(pkg.subarray(0, 100_000));
      await waitFor(
        async () => (await readdir(join(blobDir, 'tmp'))).length === 1,
        'the upload to reach the blob store',
      );
      socket.destroy();
      await waitFor(async () => (await readdir(join(blobDir, 'tmp'))).length === 0, 'the partial blob to be removed');
      assert.deepEqual(await storedFiles(), before);
      assert.equal(await packageCount(), 1);
    });
  });

  describe('blob download', () => {
    const blobUrl = () => `/v1/firmware/blobs/${goodDigest}`;

    it('the whole blob with Content-Length, ETag and Accept-Ranges, for a viewer', async () => {
      const res = await call('GET', blobUrl(), 'viewer');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-length'], String(good.length));
      assert.equal(res.headers['etag'], `"${goodDigest}"`);
      assert.equal(res.headers['accept-ranges'], 'bytes');
      assert.equal(res.headers['content-type'], 'application/octet-stream');
      assert.equal(sha256(res.rawPayload), goodDigest);
      const head = await app.inject({ method: 'HEAD', url: blobUrl(), headers: auth('viewer') });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-length'], String(good.length));
      assert.equal(head.rawPayload.length, 0);
    });

    it('ranges: N- and N-M answer 206 with Content-Range; -N is the last N bytes; past the end is 416', async () => {
      const from = await call('GET', blobUrl(), 'viewer', { headers: { range: 'bytes=1000-' } });
      assert.equal(from.statusCode, 206);
      assert.equal(from.headers['content-range'], `bytes 1000-${good.length - 1}/${good.length}`);
      assert.equal(from.headers['content-length'], String(good.length - 1000));
      assert.ok(from.rawPayload.equals(good.subarray(1000)));
      const span = await call('GET', blobUrl(), 'viewer', { headers: { range: 'bytes=10-19' } });
      assert.equal(span.statusCode, 206);
      assert.equal(span.headers['content-range'], `bytes 10-19/${good.length}`);
      assert.ok(span.rawPayload.equals(good.subarray(10, 20)));
      const clamped = await call('GET', blobUrl(), 'viewer', {
        headers: { range: `bytes=${good.length - 3}-${good.length + 100}` },
      });
      assert.ok(clamped.rawPayload.equals(good.subarray(good.length - 3)));
      const suffix = await call('GET', blobUrl(), 'viewer', { headers: { range: 'bytes=-5' } });
      assert.ok(suffix.rawPayload.equals(good.subarray(good.length - 5)));
      const past = await call('GET', blobUrl(), 'viewer', { headers: { range: `bytes=${good.length}-` } });
      assert.equal(past.statusCode, 416);
      assert.equal(past.headers['content-range'], `bytes */${good.length}`);
      assert.equal(past.json().error.details[0].field, 'header.Range');
      const several = await call('GET', blobUrl(), 'viewer', { headers: { range: 'bytes=0-1,5-6' } });
      assert.equal(several.statusCode, 200, 'a multi-range request gets the whole blob');
    });

    it('404 for an unknown digest, 400 for a malformed one, 401 without a token', async () => {
      const unknown = await call('GET', `/v1/firmware/blobs/${'0'.repeat(64)}`, 'viewer');
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().error.code, 'NOT_FOUND');
      assert.equal(
        (await call('GET', '/v1/firmware/blobs/ABC', 'viewer')).json().error.details[0].field,
        'path.digest',
      );
      assert.equal((await app.inject({ method: 'GET', url: blobUrl() })).statusCode, 401);
    });
  });

  describe('packages', () => {
    it('list newest first with a cursor and filters; get with ETag and 304', async () => {
      const second = await upload(buildFwpkg(trayPackage('1.1.0')), 'tray-1.1.fwpkg');
      assert.equal(second.statusCode, 201);
      const page1 = await call('GET', '/v1/firmware/packages?limit=1', 'viewer');
      assert.deepEqual(
        page1.json().items.map((p: { package_version: string }) => p.package_version),
        ['1.1.0'],
      );
      const page2 = await call('GET', `/v1/firmware/packages?limit=1&cursor=${page1.json().next_cursor}`, 'viewer');
      assert.deepEqual(
        page2.json().items.map((p: { package_version: string }) => p.package_version),
        ['1.0.0'],
      );
      assert.equal(page2.json().next_cursor, null);
      const byDigest = await call('GET', `/v1/firmware/packages?digest=${goodDigest}`, 'viewer');
      assert.deepEqual(
        byDigest.json().items.map((p: { id: string }) => p.id),
        [goodId],
      );
      const one = await call('GET', `/v1/firmware/packages/${goodId}`, 'viewer');
      assert.equal(one.headers['etag'], `"${goodDigest}"`);
      const fresh = await call('GET', `/v1/firmware/packages/${goodId}`, 'viewer', {
        headers: { 'if-none-match': `"${goodDigest}"` },
      });
      assert.equal(fresh.statusCode, 304);
      assert.equal(
        (await call('GET', '/v1/firmware/packages/00000000-0000-4000-8000-000000000000', 'viewer')).statusCode,
        404,
      );
    });
  });

  describe('manifests', () => {
    const steps = (packageId: string, version = '1.0.0') => [
      {
        name: 'bmc',
        package_id: packageId,
        targets: ['/redfish/v1/UpdateService/FirmwareInventory/FW_BMC_0'],
        components: [{ id: 'FW_BMC_0', version: `bmc-${version}` }],
      },
      { name: 'hmc', package_id: packageId, components: [{ id: 'HGX_FW_BMC_0', version: `hmc-${version}` }] },
    ];
    const create = (body: object) => call('POST', '/v1/firmware/manifests', 'operator', { body });
    let manifestA = '';
    let manifestB = '';

    it('400 naming each bad field: hardware type, package, component version, duplicate step name', async () => {
      const badType = await create({ name: 'm', hardware_type: 'toaster', steps: steps(goodId) });
      assert.equal(badType.statusCode, 400);
      assert.equal(badType.json().error.details[0].field, 'body.hardware_type');
      const missing = await create({
        name: 'm',
        hardware_type: 'compute_gb200_nvidia',
        steps: steps('00000000-0000-4000-8000-000000000000'),
      });
      assert.equal(missing.statusCode, 400);
      assert.deepEqual(
        missing.json().error.details.map((d: { field: string }) => d.field),
        ['body.steps.0.package_id', 'body.steps.1.package_id'],
      );
      const wrongVersion = await create({
        name: 'm',
        hardware_type: 'compute_gb200_nvidia',
        steps: [
          {
            name: 'bmc',
            package_id: goodId,
            components: [
              { id: 'FW_BMC_0', version: 'bmc-1.0.0' },
              { id: 'FW_CPLD_0', version: '7.7' },
            ],
          },
        ],
      });
      assert.equal(wrongVersion.statusCode, 400);
      assert.equal(wrongVersion.json().error.details[0].field, 'body.steps.0.components.1.version');
      assert.match(
        wrongVersion.json().error.message,
        /FW_CPLD_0 version 7\.7 is not in package tray\.fwpkg, whose images are versions bmc-1\.0\.0, hmc-1\.0\.0/,
      );
      const twice = await create({
        name: 'm',
        hardware_type: 'compute_gb200_nvidia',
        steps: [steps(goodId)[0], { ...steps(goodId)[1], name: 'bmc' }],
      });
      assert.equal(twice.statusCode, 400);
      assert.equal(twice.json().error.details[0].field, 'body.steps.1.name');
      assert.equal((await handle.pool.query('select count(*)::int as n from firmware_manifests')).rows[0].n, 0);
    });

    it('201 with ETag = revision; a second manifest with the same name is 409', async () => {
      const res = await create({
        name: 'gb200-2025.03',
        hardware_type: 'compute_gb200_nvidia',
        steps: steps(goodId),
        default: true,
      });
      assert.equal(res.statusCode, 201, res.body);
      manifestA = res.json().id;
      assert.equal(res.headers['etag'], '"1"');
      assert.deepEqual(res.json().steps[1], {
        name: 'hmc',
        package_id: goodId,
        targets: [],
        components: [{ id: 'HGX_FW_BMC_0', version: 'hmc-1.0.0' }],
      });
      assert.equal(res.json().default, true);
      const dup = await create({ name: 'gb200-2025.03', hardware_type: 'compute_gb200_nvidia', steps: steps(goodId) });
      assert.equal(dup.statusCode, 409);
      assert.equal(dup.json().error.code, 'ALREADY_EXISTS');
    });

    it(`a create retried with its Idempotency-Key answers the first 201 again, ETag and Location included, and makes \
one manifest`, async () => {
      const body = { name: 'gb200-retried', hardware_type: 'compute_gb200_nvidia', steps: steps(goodId) };
      const headers = { 'idempotency-key': 'manifest-k1' };
      const first = await call('POST', '/v1/firmware/manifests', 'operator', { body, headers });
      const again = await call('POST', '/v1/firmware/manifests', 'operator', { body, headers });
      assert.equal(first.statusCode, 201, first.body);
      assert.deepEqual(
        [again.statusCode, again.json(), again.headers['etag'], again.headers['location']],
        [201, first.json(), first.headers['etag'], `/v1/firmware/manifests/${first.json().id}`],
      );
      assert.equal(
        (await handle.pool.query("select count(*)::int as n from firmware_manifests where name = 'gb200-retried'"))
          .rows[0].n,
        1,
      );
      await call('DELETE', `/v1/firmware/manifests/${first.json().id}`, 'admin', {
        headers: { 'if-match': first.headers['etag'] as string },
      });
    });

    it('a new default takes over from the old in one transaction; POST .../default swaps back', async () => {
      const b = await create({
        name: 'gb200-2025.04',
        hardware_type: 'compute_gb200_nvidia',
        steps: steps(goodId),
        default: true,
      });
      manifestB = b.json().id;
      const a = (await call('GET', `/v1/firmware/manifests/${manifestA}`, 'viewer')).json();
      assert.equal(a.default, false);
      assert.equal(a.revision, 2);
      const back = await call('POST', `/v1/firmware/manifests/${manifestA}/default`, 'operator');
      assert.equal(back.statusCode, 200);
      assert.equal(back.json().default, true);
      const defaults = await call(
        'GET',
        '/v1/firmware/manifests?hardware_type=compute_gb200_nvidia&default=true',
        'viewer',
      );
      assert.deepEqual(
        defaults.json().items.map((m: { id: string }) => m.id),
        [manifestA],
      );
      const all = await call('GET', '/v1/firmware/manifests?limit=1', 'viewer');
      assert.equal(all.json().items[0].name, 'gb200-2025.03');
      const rest = await call('GET', `/v1/firmware/manifests?limit=1&cursor=${all.json().next_cursor}`, 'viewer');
      assert.equal(rest.json().items[0].name, 'gb200-2025.04');
    });

    it('PUT needs the current ETag in If-Match (412 otherwise) and bumps the revision', async () => {
      const current = await call('GET', `/v1/firmware/manifests/${manifestB}`, 'viewer');
      const tag = current.headers['etag'] as string;
      const body = { name: 'gb200-2025.04', hardware_type: 'compute_gb200_nvidia', steps: steps(goodId).slice(0, 1) };
      const stale = await call('PUT', `/v1/firmware/manifests/${manifestB}`, 'operator', {
        body,
        headers: { 'if-match': '"999"' },
      });
      assert.equal(stale.statusCode, 412);
      assert.equal(stale.json().error.code, 'FAILED_PRECONDITION');
      const ok = await call('PUT', `/v1/firmware/manifests/${manifestB}`, 'operator', {
        body,
        headers: { 'if-match': tag },
      });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().revision, current.json().revision + 1);
      assert.equal(ok.headers['etag'], `"${ok.json().revision}"`);
      assert.equal(ok.json().steps.length, 1);
      const again = await call('PUT', `/v1/firmware/manifests/${manifestB}`, 'operator', {
        body,
        headers: { 'if-match': tag },
      });
      assert.equal(again.statusCode, 412);
      const fresh = await call('GET', `/v1/firmware/manifests/${manifestB}`, 'viewer', {
        headers: { 'if-none-match': ok.headers['etag'] as string },
      });
      assert.equal(fresh.statusCode, 304);
      const moveDefault = await call('PUT', `/v1/firmware/manifests/${manifestA}`, 'operator', {
        body: { ...body, name: 'gb200-2025.03', hardware_type: 'compute_gb300_nvidia' },
      });
      assert.equal(moveDefault.statusCode, 409);
    });

    it(`a package a manifest uses cannot be deleted (409); deleting manifest then package removes the \
blob`, async () => {
      const other = (await upload(buildFwpkg(trayPackage('3.0.0')), 'tray-3.fwpkg')).json();
      const m = await create({ name: 'temp', hardware_type: 'switch_gb200_nvidia', steps: steps(other.id, '3.0.0') });
      assert.equal((await call('DELETE', `/v1/firmware/packages/${other.id}`, 'operator')).statusCode, 403);
      const used = await call('DELETE', `/v1/firmware/packages/${other.id}`, 'admin');
      assert.equal(used.statusCode, 409);
      assert.match(used.json().error.message, /used by manifest temp/);
      assert.equal(
        (await call('DELETE', `/v1/firmware/manifests/${m.json().id}`, 'admin', { headers: { 'if-match': '"7"' } }))
          .statusCode,
        412,
      );
      assert.equal((await call('DELETE', `/v1/firmware/manifests/${m.json().id}`, 'admin')).statusCode, 204);
      assert.equal((await call('DELETE', `/v1/firmware/packages/${other.id}`, 'admin')).statusCode, 204);
      assert.equal(await blobs.stat(other.digest), undefined);
      assert.equal((await call('GET', `/v1/firmware/blobs/${other.digest}`, 'viewer')).statusCode, 404);
    });
  });

  describe('compliance', () => {
    const ids: Record<string, string> = {};

    before(async () => {
      await insertSite(handle.db, { id: 'fw-a', name: 'A' });
      await insertSite(handle.db, { id: 'fw-b', name: 'B' });
      const add = async (name: string, siteId: string, nodeType: string | null) => {
        ids[name] = (
          await insertDevice(handle.db, {
            name,
            siteId,
            nodeType,
            bmcUrl: 'http://127.0.0.1:1',
            credentialRef: 'bmc/x',
          })
        ).id;
      };
      await add('c-compliant', 'fw-a', 'compute_gb200_nvidia');
      await add('c-outdated', 'fw-a', 'compute_gb200_nvidia');
      await add('c-unknown', 'fw-a', 'compute_gb200_nvidia');
      await add('s-nomanifest', 'fw-a', 'switch_gb200_nvidia');
      await add('x-untyped', 'fw-b', null);
      await add('z-deleted', 'fw-b', 'compute_gb200_nvidia');
      await handle.pool.query('update devices set deleted_at = now() where id = $1', [ids['z-deleted']]);
      const installed: [string, string, string][] = [
        ['c-compliant', 'FW_BMC_0', 'bmc-1.0.0'],
        ['c-compliant', 'HGX_FW_BMC_0', 'hmc-1.0.0'],
        ['c-compliant', 'FW_EXTRA', 'anything'],
        ['c-outdated', 'FW_BMC_0', 'bmc-0.9.0'],
        ['c-unknown', 'FW_BMC_0', 'bmc-1.0.0'],
      ];
      for (const [device, component, version] of installed) {
        await handle.pool.query('insert into device_firmware (device_id, component_id, version) values ($1, $2, $3)', [
          ids[device],
          component,
          version,
        ]);
      }
    });

    it('every live device against its default manifest, by name, with the per-component comparison', async () => {
      const res = await call('GET', '/v1/firmware/compliance', 'viewer');
      assert.equal(res.statusCode, 200, res.body);
      const items = res.json().items as {
        name: string;
        status: string;
        manifest_id: string | null;
        components: unknown[];
      }[];
      assert.deepEqual(
        items.map((i) => [i.name, i.status]),
        [
          ['c-compliant', 'compliant'],
          ['c-outdated', 'outdated'],
          ['c-unknown', 'unknown'],
          ['s-nomanifest', 'no_manifest'],
          ['x-untyped', 'no_manifest'],
        ],
      );
      const manifest = (
        await call('GET', '/v1/firmware/manifests?default=true&hardware_type=compute_gb200_nvidia', 'viewer')
      ).json().items[0];
      assert.equal(items[0]!.manifest_id, manifest.id);
      assert.deepEqual(items[1]!.components, [
        { id: 'FW_BMC_0', desired: 'bmc-1.0.0', installed: 'bmc-0.9.0', compliant: false },
        { id: 'HGX_FW_BMC_0', desired: 'hmc-1.0.0', installed: null, compliant: false },
      ]);
      assert.deepEqual(items[3]!.components, []);
      assert.equal(items[3]!.manifest_id, null);
    });

    it('filters by site, hardware type and status; keyset pages by device', async () => {
      const outdated = await call('GET', '/v1/firmware/compliance?status=outdated&status=unknown', 'viewer');
      assert.deepEqual(
        outdated.json().items.map((i: { name: string }) => i.name),
        ['c-outdated', 'c-unknown'],
      );
      const siteB = await call('GET', '/v1/firmware/compliance?site_id=fw-b', 'viewer');
      assert.deepEqual(
        siteB.json().items.map((i: { name: string }) => i.name),
        ['x-untyped'],
      );
      const switches = await call('GET', '/v1/firmware/compliance?hardware_type=switch_gb200_nvidia', 'viewer');
      assert.deepEqual(
        switches.json().items.map((i: { name: string }) => i.name),
        ['s-nomanifest'],
      );
      const names: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { items: { name: string }[]; next_cursor: string | null } = (
          await call('GET', `/v1/firmware/compliance?limit=2${cursor ? `&cursor=${cursor}` : ''}`, 'viewer')
        ).json();
        names.push(...page.items.map((i) => i.name));
        cursor = page.next_cursor;
      } while (cursor);
      assert.deepEqual(names, ['c-compliant', 'c-outdated', 'c-unknown', 's-nomanifest', 'x-untyped']);
      assert.equal((await call('GET', '/v1/firmware/compliance?status=fine', 'viewer')).statusCode, 400);
    });

    it('summary counts by status, per site', async () => {
      const all = (await call('GET', '/v1/firmware/compliance/summary', 'viewer')).json();
      assert.deepEqual(all, { total: 5, by_status: { compliant: 1, outdated: 1, unknown: 1, no_manifest: 2 } });
      const siteA = (await call('GET', '/v1/firmware/compliance/summary?site_id=fw-a', 'viewer')).json();
      assert.deepEqual(siteA, { total: 4, by_status: { compliant: 1, outdated: 1, unknown: 1, no_manifest: 1 } });
    });
  });

  it('the upload and every firmware route are in /openapi.json', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.ok(doc.paths['/v1/firmware/packages'].post.requestBody.content['application/octet-stream']);
    for (const path of [
      '/v1/firmware/packages/{id}',
      '/v1/firmware/blobs/{digest}',
      '/v1/firmware/manifests/{id}/default',
      '/v1/firmware/compliance/summary',
    ])
      assert.ok(doc.paths[path], path);
  });
});

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

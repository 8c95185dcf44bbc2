import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  DiscoveryCache,
  getPowerState,
  getUpdateService,
  listTasks,
  pushFirmware,
  RedfishClient,
  resetManager,
} from '../src/index.js';
import { fakeBmc, type FakeBmc } from './helpers/fake-bmc.js';
import { credentials, json } from './helpers/servers.js';

describe('discovery shared by the clients of one process', () => {
  let bmc: FakeBmc;
  const clients: RedfishClient[] = [];
  const open = (discovery: DiscoveryCache, signal?: AbortSignal) => {
    const c = new RedfishClient({ baseUrl: bmc.url, credentials, discovery, ...(signal ? { signal } : {}) });
    clients.push(c);
    return c;
  };
  const paths = () => bmc.requests.map((r) => r.path);
  /** The BMC holds its Systems listing until the returned function is called. */
  const holdSystemsListing = () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    bmc.state.intercept = async (_req, _res, path) => {
      if (path === '/redfish/v1/Systems') await held;
      return false;
    };
    return release;
  };
  const systemsListingReached = async () => {
    for (const deadline = Date.now() + 5000; !paths().includes('/redfish/v1/Systems');) {
      assert.ok(Date.now() < deadline, 'the first client reached the Systems listing');
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  let image: string;
  const push = (client: RedfishClient) => pushFirmware(client, { filePath: image });
  const pushPath = '/redfish/v1/UpdateService/update-multipart';
  before(async () => {
    bmc = await fakeBmc(credentials);
    image = join(await mkdtemp(join(tmpdir(), 'fleet-discovery-')), 'image.fwpkg');
    await writeFile(image, Buffer.alloc(4096, 7));
  });
  beforeEach(() => {
    bmc.requests.length = 0;
    bmc.state.systemId = 'System_0';
    bmc.state.pushPath = pushPath;
    bmc.state.maxImageSizeBytes = 512 * 1024 * 1024;
    bmc.state.uploads.length = 0;
    bmc.state.intercept = undefined;
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await bmc.close();
    await rm(join(image, '..'), { recursive: true, force: true });
  });

  it('a second client of the same BMC reads the resource only, not the links the first one found', async () => {
    const discovery = new DiscoveryCache();
    await getPowerState(open(discovery));
    const first = paths();
    assert.deepEqual(first, ['/redfish/v1', '/redfish/v1/Systems', '/redfish/v1/Systems/System_0']);
    bmc.requests.length = 0;
    await getPowerState(open(discovery));
    assert.deepEqual(paths(), ['/redfish/v1/Systems/System_0']);
    // Without the shared cache every client walks the links again.
    bmc.requests.length = 0;
    await getPowerState(open(new DiscoveryCache()));
    assert.deepEqual(paths(), first);
  });

  it('a link gone stale (the system re-enumerated) is found again once, for every client after it', async () => {
    const discovery = new DiscoveryCache();
    await getPowerState(open(discovery));
    bmc.state.systemId = 'System_1';
    bmc.requests.length = 0;
    assert.equal(await getPowerState(open(discovery)), 'Off');
    assert.deepEqual(paths(), [
      '/redfish/v1/Systems/System_0',
      '/redfish/v1',
      '/redfish/v1/Systems',
      '/redfish/v1/Systems/System_1',
    ]);
    bmc.requests.length = 0;
    await getPowerState(open(discovery));
    assert.deepEqual(paths(), ['/redfish/v1/Systems/System_1']);
  });

  it('a controller reset by one client makes the others discover again', async () => {
    const discovery = new DiscoveryCache();
    await getPowerState(open(discovery));
    await resetManager(open(discovery), 'bmc');
    bmc.requests.length = 0;
    await getPowerState(open(discovery));
    assert.deepEqual(paths(), ['/redfish/v1', '/redfish/v1/Systems', '/redfish/v1/Systems/System_0']);
  });

  it("one client's cancelled discovery is not another's failure, and nothing half-found is kept", async () => {
    const discovery = new DiscoveryCache();
    // The Systems listing hangs until the first client gives up.
    const release = holdSystemsListing();
    const abort = new AbortController();
    const cancelled = getPowerState(open(discovery, abort.signal));
    await systemsListingReached();
    abort.abort();
    await assert.rejects(cancelled);
    release();
    assert.equal(await getPowerState(open(discovery)), 'Off');
    // The root the cancelled client had read is shared; the Systems link it never got is read by the second.
    assert.deepEqual(paths().filter((p) => p === '/redfish/v1').length, 1);
    assert.deepEqual(paths().filter((p) => p === '/redfish/v1/Systems').length, 2);
  });

  it('a request the BMC never answers (it may be rebooting) makes every client discover again', async () => {
    const discovery = new DiscoveryCache();
    await getPowerState(open(discovery));
    // The next request's connection is dropped without an answer.
    bmc.state.intercept = (req) => {
      bmc.state.intercept = undefined;
      req.socket.destroy();
      return true;
    };
    const once = new RedfishClient({ baseUrl: bmc.url, credentials, discovery, maxAttempts: 1 });
    clients.push(once);
    await assert.rejects(getPowerState(once), (err: Error) => /Unavailable/.test(err.message));
    bmc.requests.length = 0;
    await getPowerState(open(discovery));
    assert.deepEqual(paths(), ['/redfish/v1', '/redfish/v1/Systems', '/redfish/v1/Systems/System_0']);
  });

  it('a link one client was finding while another invalidated the BMC is not shared', async () => {
    const discovery = new DiscoveryCache();
    const release = holdSystemsListing();
    const finding = getPowerState(open(discovery));
    await systemsListingReached();
    open(discovery).invalidate(); // a reset by another activity
    release();
    await finding;
    bmc.requests.length = 0;
    await getPowerState(open(discovery));
    assert.deepEqual(paths(), ['/redfish/v1', '/redfish/v1/Systems', '/redfish/v1/Systems/System_0']);
  });

  it('what a lookup found is not kept when the BMC was forgotten while it ran', () => {
    const cache = new DiscoveryCache();
    const before = cache.generation('a');
    cache.forget('a');
    cache.set('a', 'link:system:', '/redfish/v1/Systems/Old', before);
    assert.equal(cache.has('a', 'link:system:'), false);
    cache.set('a', 'link:system:', '/redfish/v1/Systems/New', cache.generation('a'));
    assert.equal(cache.get('a', 'link:system:'), '/redfish/v1/Systems/New');
  });

  it('keeps at most maxBmcs BMCs, the least recently used going first, each for ttlMs', async () => {
    const cache = new DiscoveryCache({ maxBmcs: 2, ttlMs: 50 });
    cache.set('a', 'root', 1, 0);
    cache.set('b', 'root', 2, 0);
    assert.equal(cache.get('a', 'root'), 1); // a is now the most recent
    cache.set('c', 'root', 3, 0);
    assert.deepEqual(
      ['a', 'b', 'c'].map((k) => cache.has(k, 'root')),
      [true, false, true],
    );
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(cache.get('a', 'root'), undefined);
    assert.equal(cache.has('c', 'root'), false);
  });

  it("an update's next push and task scan read neither the UpdateService nor the TaskService again", async () => {
    const discovery = new DiscoveryCache();
    const first = open(discovery);
    assert.deepEqual(await listTasks(first), []);
    await push(first);
    assert.deepEqual(paths(), [
      '/redfish/v1',
      '/redfish/v1/TaskService',
      '/redfish/v1/TaskService/Tasks',
      '/redfish/v1/UpdateService',
      pushPath,
    ]);
    bmc.requests.length = 0;
    // The next step's push, in the next activity's client.
    const next = open(discovery);
    assert.deepEqual(
      (await listTasks(next)).map((t) => t.uri),
      ['/redfish/v1/TaskService/Tasks/1'],
    );
    await push(next);
    assert.deepEqual(paths(), ['/redfish/v1/TaskService/Tasks', '/redfish/v1/TaskService/Tasks/1', pushPath]);
    assert.equal(bmc.state.uploads.length, 2);
  });

  it('a push URI that moved is discovered again and the image goes to the BMC once', async () => {
    const discovery = new DiscoveryCache();
    await push(open(discovery));
    bmc.state.pushPath = '/redfish/v1/UpdateService/upload';
    bmc.requests.length = 0;
    const { taskUri } = await push(open(discovery));
    assert.equal(taskUri, '/redfish/v1/TaskService/Tasks/1');
    assert.deepEqual(
      bmc.requests.map((r) => `${r.method} ${r.path}`),
      [`POST ${pushPath}`, 'GET /redfish/v1', 'GET /redfish/v1/UpdateService', 'POST /redfish/v1/UpdateService/upload'],
    );
    assert.equal(bmc.state.uploads.length, 2, 'the refused POST delivered nothing');
  });

  it('a push URI read afresh that answers 404 is not pushed to again, even by a warm client', async () => {
    const discovery = new DiscoveryCache();
    const client = open(discovery);
    await listTasks(client); // the activity's scan before it pushes: the client is warm
    bmc.state.intercept = (req, res, path) =>
      req.method === 'POST' && path === pushPath ? (json(res, 404, { error: { message: 'gone' } }), true) : false;
    await assert.rejects(push(client), (err: Error) => /NotFound/.test(err.message));
    assert.equal(bmc.requests.filter((r) => r.method === 'POST').length, 1);
  });

  it('a kept push URI answering 503 is not pushed to beyond what the client resends', async () => {
    const discovery = new DiscoveryCache();
    await push(open(discovery));
    bmc.state.intercept = (req, res, path) =>
      req.method === 'POST' && path === pushPath ? (json(res, 503, { error: { message: 'busy' } }), true) : false;
    bmc.requests.length = 0;
    const once = new RedfishClient({ baseUrl: bmc.url, credentials, discovery, maxAttempts: 1 });
    clients.push(once);
    await assert.rejects(push(once));
    assert.deepEqual(
      bmc.requests.map((r) => `${r.method} ${r.path}`),
      [`POST ${pushPath}`],
    );
  });

  it('a TaskService that names no task list is read again at the next scan', async () => {
    const discovery = new DiscoveryCache();
    let bare = true;
    bmc.state.intercept = (req, res, path) =>
      bare && path === '/redfish/v1/TaskService' ? ((bare = false), json(res, 200, {}), true) : false;
    assert.deepEqual(await listTasks(open(discovery)), []);
    bmc.requests.length = 0;
    assert.deepEqual(await listTasks(open(discovery)), []);
    assert.deepEqual(paths(), ['/redfish/v1/TaskService', '/redfish/v1/TaskService/Tasks']);
  });

  it('an UpdateService that names no push URI is read again next time', async () => {
    const discovery = new DiscoveryCache();
    let bare = true;
    bmc.state.intercept = (_req, res, path) =>
      bare && path === '/redfish/v1/UpdateService' ? ((bare = false), json(res, 200, {}), true) : false;
    assert.equal((await getUpdateService(open(discovery))).multipartHttpPushUri, undefined);
    bmc.requests.length = 0;
    await push(open(discovery));
    assert.deepEqual(paths(), ['/redfish/v1/UpdateService', pushPath]);
  });

  it('an image over a kept size limit is checked against the limit read again before it is refused', async () => {
    const discovery = new DiscoveryCache();
    bmc.state.maxImageSizeBytes = 1024; // the image is 4 KiB
    await getUpdateService(open(discovery));
    // The BMC restarted into firmware that takes larger images, unseen by this process.
    bmc.state.maxImageSizeBytes = 8192;
    bmc.requests.length = 0;
    await push(open(discovery));
    assert.deepEqual(paths(), ['/redfish/v1', '/redfish/v1/UpdateService', pushPath]);
    assert.equal(bmc.state.uploads.length, 1);
    // A limit read afresh stands.
    bmc.state.maxImageSizeBytes = 1024;
    const fresh = open(new DiscoveryCache());
    await assert.rejects(push(fresh), (err: Error) => /accepts at most 1024/.test(err.message));
    assert.equal(bmc.state.uploads.length, 1);
  });
});

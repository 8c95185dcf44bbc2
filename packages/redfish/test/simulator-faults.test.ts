import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  crc32,
  profiles,
  startAdminServer,
  startRedfishSimulator,
  type BmcSpec,
  type Faults,
  type LoggedRequest,
  type ProfileId,
  type RedfishSimulator,
} from '@fleet/simulators';
import {
  applyPowerAction,
  getFirmwareInventory,
  getPowerState,
  pushFirmware,
  RedfishClient,
  RedfishError,
  resetManager,
  resetSystem,
  waitForTask,
  type FirmwareInventory,
  type RedfishClientOptions,
} from '../src/index.js';
import { freePort } from './helpers/servers.js';

// The real client against the real simulator (in-process), one simulated BMC per scenario,
// faults switched through the simulator's admin API. Assertions are on outcomes, typed
// errors and the simulator's request log, never on how long anything took.

const USER = 'admin';
const PASSWORD = 'sim-fault-pw';
const SYSTEM = '/redfish/v1/Systems/System_0';
const SESSIONS = '/redfish/v1/SessionService/Sessions';
const PUSH = '/redfish/v1/UpdateService/update-multipart';
const ROOT = '/redfish/v1';

const gb200 = profiles['gb200-compute'];
const gb300 = profiles['gb300-compute'];
const fwSpec = (id: string) => gb200.firmware.find((f) => f.id === id)!;
const BMC_FW = fwSpec('FW_BMC_0');
const GPU_FW = fwSpec('HGX_FW_GPU_0');

// ---- PLDM firmware packages (DSP0267 1.0 layout), as packages/simulators/test builds them ----

interface PkgComponent {
  identifier: number;
  stamp: number;
  version: string;
}

/** A small valid PLDM package: one device record (UUID descriptor) listing every component, then 64-byte images. */
function pldmPackage(deviceUuid: string, components: PkgComponent[]): Buffer {
  const u8 = (v: number) => Buffer.from([v]);
  const u16 = (v: number) => {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(v);
    return b;
  };
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    return b;
  };
  const str = (s: string) => Buffer.concat([u8(1), u8(Buffer.byteLength(s)), Buffer.from(s)]);
  const imageBytes = 64;
  let bits = 0;
  components.forEach((_, i) => (bits |= 1 << i));
  const setVersion = Buffer.from('FLEET-TEST-SET');
  const descriptor = Buffer.concat([u16(0x0002), u16(16), Buffer.from(deviceUuid, 'hex')]);
  const recordBody = Buffer.concat([
    u8(1),
    u32(0),
    u8(1),
    u8(setVersion.length),
    u16(0),
    u8(bits),
    setVersion,
    descriptor,
  ]);
  const record = Buffer.concat([u16(recordBody.length + 2), recordBody]);
  const packageVersion = str('FLEET-TEST-PKG');
  const fixedLen = 16 + 1 + 2 + 13 + 2 + packageVersion.length;
  const entryLen = (c: PkgComponent) => 2 + 2 + 4 + 2 + 2 + 4 + 4 + 2 + Buffer.byteLength(c.version);
  const headerSize = fixedLen + 1 + record.length + 2 + components.reduce((n, c) => n + entryLen(c), 0) + 4;
  const table = components.map((c, i) =>
    Buffer.concat([
      u16(10),
      u16(c.identifier),
      u32(c.stamp),
      u16(0),
      u16(0),
      u32(headerSize + i * imageBytes),
      u32(imageBytes),
      str(c.version),
    ]),
  );
  const header = Buffer.concat([
    Buffer.from('f018878ccb7d49439800a02f059aca02', 'hex'),
    u8(1),
    u16(headerSize),
    Buffer.alloc(13),
    u16(8),
    packageVersion,
    u8(1),
    record,
    u16(components.length),
    ...table,
  ]);
  return Buffer.concat([header, u32(crc32(header)), Buffer.alloc(components.length * imageBytes, 0x5a)]);
}

// ---- the simulator and its admin API ------------------------------------------------------------

const bmcIds = [
  'lat',
  'err',
  'rst',
  'hang',
  'reboot',
  'taskfail',
  'stale',
  'sess',
  'limit',
  'fw',
  'wrongtray',
  'downgrade',
] as const;
type BmcId = (typeof bmcIds)[number];

interface AdminFirmware {
  id: string;
  version: string;
  staged?: string;
}

describe('integration: the client against every simulator fault', () => {
  let sim: RedfishSimulator;
  let adminUrl: string;
  let closeAdmin: () => Promise<void>;
  let dir: string;
  const clients: RedfishClient[] = [];

  before(async () => {
    const profileOf: Partial<Record<BmcId, ProfileId>> = { wrongtray: 'gb300-compute' };
    const specs: BmcSpec[] = [];
    for (const id of bmcIds) {
      specs.push({
        id,
        address: '127.0.0.1',
        port: await freePort(),
        username: USER,
        password: PASSWORD,
        profile: profileOf[id] ?? 'gb200-compute',
        ...(id === 'limit' ? { sessionLimit: 2 } : {}),
        // Latency and errors over many requests: these read the firmware inventory member by member.
        ...(id === 'lat' || id === 'err' ? { quirks: { noExpandQuery: true } } : {}),
      });
    }
    // timeScale 0.001: a 200 s update runs 200 ms (ten 20 ms steps), a 100 s BMC reboot 100 ms.
    sim = await startRedfishSimulator({
      bmcs: specs,
      timeScale: 0.001,
      timings: { firmwareUpdateS: 200, bmcRebootS: 100 },
    });
    const admin = await startAdminServer(sim, [...bmcIds], '127.0.0.1', 0);
    adminUrl = `http://127.0.0.1:${admin.port}`;
    closeAdmin = admin.close;
    dir = await mkdtemp(join(tmpdir(), 'fleet-sim-faults-'));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await closeAdmin();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A client for one simulated BMC; closed after the suite. Sessions by default, small retry waits. */
  const client = (id: BmcId, o: Partial<RedfishClientOptions> = {}) => {
    const c = new RedfishClient({
      baseUrl: sim.bmcUrl(id),
      credentials: { username: USER, password: PASSWORD },
      auth: 'session',
      requestTimeoutMs: 5_000,
      retryBaseDelayMs: 2,
      // The simulator's Retry-After counts simulated seconds; cap the wait so a scaled reboot stays scaled.
      maxRetryDelayMs: 10,
      ...o,
    });
    clients.push(c);
    return c;
  };

  const adminCall = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${adminUrl}${path}`, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    assert.ok(res.ok, `admin ${method} ${path}: ${res.status}`);
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  };
  const setFaults = async (id: BmcId, faults: Faults) =>
    assert.deepEqual(await adminCall<Faults>('PUT', `/bmcs/${id}/faults`, faults), faults);
  const clearFaults = (id: BmcId) => adminCall<void>('DELETE', `/bmcs/${id}/faults`);
  const requests = async (id: BmcId) =>
    (await adminCall<{ items: LoggedRequest[] }>('GET', `/bmcs/${id}/requests`)).items;
  const clearRequests = (id: BmcId) => adminCall<void>('DELETE', `/bmcs/${id}/requests`);
  const firmware = async (id: BmcId, fw: string) =>
    (await adminCall<{ items: AdminFirmware[] }>('GET', `/bmcs/${id}/firmware`)).items.find((i) => i.id === fw)!;
  const powerState = async (id: BmcId) => (await adminCall<{ powerState: string }>('GET', `/bmcs/${id}`)).powerState;
  const liveSessions = (id: BmcId) => sim.bmc(id).sessions().size;
  const only = (log: LoggedRequest[], method: string, path: string) =>
    log.filter((r) => r.method === method && r.path === path);

  /**
   * Switches `faults` on the moment the simulator has answered a request matching `when`, so the
   * next request (typically the POST an operation sends after reading its target) meets the fault.
   */
  const injectAfter = (id: BmcId, when: (r: LoggedRequest) => boolean, faults: Faults) => {
    const bmc = sim.bmc(id);
    const record = bmc.record.bind(bmc);
    bmc.record = (entry) => {
      record(entry);
      if (!when(entry)) return;
      bmc.record = record;
      bmc.setFaults(faults);
    };
  };

  /** Polls `fn` until it yields a value; retryable Redfish errors (the BMC is rebooting) count as not yet. */
  const eventually = async <T>(fn: () => Promise<T | undefined>, what: string): Promise<T> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        const v = await fn();
        if (v !== undefined) return v;
      } catch (err) {
        if (!(err instanceof RedfishError) || !err.retryable) throw err;
      }
      if (Date.now() > deadline) throw new Error(`not reached in time: ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  const rejection = async (p: Promise<unknown>): Promise<RedfishError> => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof RedfishError, `expected a RedfishError, got ${String(err)}`);
    return err;
  };

  const writePackage = async (name: string, pkg: Buffer) => {
    const path = join(dir, name);
    await writeFile(path, pkg);
    return path;
  };
  const bmcPackage = (version: string, stamp: number, device = BMC_FW.device!) =>
    pldmPackage(device, [{ identifier: BMC_FW.componentId!, stamp, version }]);
  const versionOf = (inv: FirmwareInventory, id: string) => inv.components.find((c) => c.id === id)?.version;
  const wait = (c: RedfishClient, taskUri: string) => waitForTask(c, taskUri, { pollIntervalMs: 5, timeoutMs: 20_000 });

  it(`latency: slow answers still complete without retries; past the request timeout a GET is retried, then \
Timeout`, async () => {
    const c = client('lat', { auth: 'basic' });
    const baseline = await getFirmwareInventory(c);
    await clearRequests('lat');
    await setFaults('lat', { latencyMs: 20 });
    assert.deepEqual(await getFirmwareInventory(c), baseline);
    const log = await requests('lat');
    assert.ok(log.length > 3);
    assert.ok(log.every((r) => r.status === 200));
    assert.equal(
      new Set(log.map((r) => r.path)).size,
      log.length,
      'every resource read once: latency alone causes no resend',
    );

    await setFaults('lat', { latencyMs: 300 });
    await clearRequests('lat');
    const impatient = client('lat', { auth: 'basic', requestTimeoutMs: 60, maxAttempts: 2 });
    const err = await rejection(getPowerState(impatient));
    assert.equal(err.code, 'Timeout');
    assert.equal(err.retryable, true);
    assert.equal(err.uri, ROOT);
    // The slow BMC still works through both attempts after the client gave up on them.
    await eventually(
      async () => ((await requests('lat')).length >= 2 ? true : undefined),
      'both attempts reach the log',
    );
    assert.deepEqual(
      (await requests('lat')).map((r) => `${r.method} ${r.path}`),
      [`GET ${ROOT}`, `GET ${ROOT}`],
    );
    await clearFaults('lat');
    assert.equal(await getPowerState(impatient), 'Off', 'the client recovers once the BMC is fast again');
  });

  it(`5xx rate: 500/502/504 are typed and never resent; 503 is retried, and a partial 503 rate is \
absorbed`, async () => {
    const c = client('err', { auth: 'basic', maxAttempts: 3 });
    const baseline = await getFirmwareInventory(c);
    assert.equal(await getPowerState(c), 'Off');

    for (const [status, code] of [
      [500, 'Internal'],
      [502, 'Unavailable'],
      [504, 'Timeout'],
    ] as const) {
      await setFaults('err', { errorRate: 1, errorStatus: status });
      await clearRequests('err');
      const err = await rejection(getPowerState(c));
      assert.equal(err.code, code);
      assert.equal(err.status, status);
      assert.equal(err.uri, SYSTEM);
      assert.deepEqual(
        (await requests('err')).map((r) => [r.path, r.status]),
        [[SYSTEM, status]],
        `HTTP ${status} is not resent`,
      );
    }

    await setFaults('err', { errorRate: 1, errorStatus: 503 });
    await clearRequests('err');
    const busy = await rejection(getPowerState(c));
    assert.equal(busy.code, 'Unavailable');
    assert.equal(busy.status, 503);
    assert.equal(busy.retryable, true);
    assert.match(busy.causeText, /temporarily unavailable/);
    const log = await requests('err');
    assert.ok(log.every((r) => r.status === 503));
    // maxAttempts on the cached link, then one re-discovery round from the service root.
    assert.equal(only(log, 'GET', SYSTEM).length, 3);
    assert.equal(only(log, 'GET', ROOT).length, 3);

    await setFaults('err', { errorRate: 0.5, errorStatus: 503 });
    await clearRequests('err');
    const patient = client('err', { auth: 'basic', maxAttempts: 40, maxRetryDelayMs: 2 });
    assert.deepEqual(await getFirmwareInventory(patient), baseline);
    const mixed = await requests('err');
    assert.ok(
      mixed.some((r) => r.status === 503),
      'some answers were 503',
    );
    const lastPerPath = new Map(mixed.map((r) => [r.path, r.status]));
    assert.ok(
      [...lastPerPath.values()].every((s) => s === 200),
      'every resource was finally served',
    );
    await clearFaults('err');
  });

  it('connection reset: a GET is resent and ends Unavailable; a reset POST action is not resent', async () => {
    const c = client('rst', { auth: 'basic', maxAttempts: 3 });
    await setFaults('rst', { resetRate: 1 });
    const err = await rejection(getPowerState(c));
    assert.equal(err.code, 'Unavailable');
    assert.equal(err.retryable, true);
    assert.deepEqual(
      (await requests('rst')).map((r) => [r.method, r.path, r.status]),
      [
        ['GET', ROOT, 0],
        ['GET', ROOT, 0],
        ['GET', ROOT, 0],
      ],
    );

    await setFaults('rst', { resetRate: 0.3 });
    const patient = client('rst', { auth: 'basic', maxAttempts: 40 });
    assert.ok(
      (await getFirmwareInventory(patient)).components.length > 0,
      'a partial reset rate is absorbed by resending GETs',
    );

    await clearFaults('rst');
    assert.equal(await getPowerState(c), 'Off', 'the client reconnects once the BMC stops resetting');
    await clearRequests('rst');
    injectAfter('rst', (r) => r.method === 'GET' && r.path === SYSTEM, { resetRate: 1 });
    const post = await rejection(resetSystem(c, 'On'));
    assert.equal(post.code, 'Unavailable');
    assert.match(post.causeText, /not resent/);
    const posts = only(await requests('rst'), 'POST', `${SYSTEM}/Actions/ComputerSystem.Reset`);
    assert.deepEqual(
      posts.map((r) => r.status),
      [0],
      'the POST went out once and was dropped unanswered',
    );
    assert.equal(await powerState('rst'), 'Off');
    await clearFaults('rst');
  });

  it(`hang: the client times out (Timeout), resends a GET but not a POST, and recovers when the hang \
ends`, async () => {
    const c = client('hang', { auth: 'basic', requestTimeoutMs: 100, maxAttempts: 2 });
    assert.equal(await getPowerState(c), 'Off');
    await setFaults('hang', { hang: true });
    await clearRequests('hang');
    const err = await rejection(getPowerState(c));
    assert.equal(err.code, 'Timeout');
    assert.equal(err.uri, SYSTEM);
    // Abandoned requests are logged with status 0 once the client drops the connection.
    await eventually(
      async () => ((await requests('hang')).length >= 2 ? true : undefined),
      'both abandoned attempts are logged',
    );
    assert.deepEqual(
      (await requests('hang')).map((r) => [r.method, r.path, r.status]),
      [
        ['GET', SYSTEM, 0],
        ['GET', SYSTEM, 0],
      ],
    );
    await clearFaults('hang');
    assert.equal(await getPowerState(c), 'Off');

    await clearRequests('hang');
    injectAfter('hang', (r) => r.method === 'GET' && r.path === SYSTEM, { hang: true });
    const post = await rejection(resetSystem(c, 'On'));
    assert.equal(post.code, 'Timeout');
    assert.match(post.causeText, /not resent/);
    await eventually(
      async () =>
        only(await requests('hang'), 'POST', `${SYSTEM}/Actions/ComputerSystem.Reset`).length ? true : undefined,
      'POST logged',
    );
    await clearFaults('hang');
    assert.equal(only(await requests('hang'), 'POST', `${SYSTEM}/Actions/ComputerSystem.Reset`).length, 1);
    assert.equal(await getPowerState(c), 'Off', 'the hung reset was never applied');
  });

  it(`BMC reboot in the middle of an update: 503 while down, the session is re-created, the task ends \
Interrupted`, async () => {
    const c = client('reboot');
    await setFaults('reboot', { rebootDuringUpdate: true });
    const file = await writePackage('reboot.fwpkg', bmcPackage('GB200Nvl-25.09-1', BMC_FW.stamp + 1));
    const pushed = await pushFirmware(c, { filePath: file });
    const result = await wait(c, pushed.taskUri);
    assert.equal(result.outcome, 'failed');
    assert.equal(result.taskState, 'Interrupted');
    assert.match(result.failureReason ?? '', /completed with errors/);
    assert.ok((result.percentComplete ?? 100) < 100);

    const log = await requests('reboot');
    const unavailable = log.findIndex((r) => r.status === 503);
    assert.ok(unavailable > 0, 'the BMC answered 503 while it rebooted');
    const after503 = log.slice(unavailable);
    const rejected = after503.findIndex((r) => r.status === 401);
    assert.ok(rejected > 0, 'the old session token was refused after the reboot');
    assert.equal(after503[rejected]!.path, pushed.taskUri);
    assert.deepEqual(
      only(log, 'POST', SESSIONS).map((r) => r.status),
      [201, 201],
      'one login before the update, one after the reboot',
    );
    assert.deepEqual(
      [after503.at(-1)!.path, after503.at(-1)!.status],
      [pushed.taskUri, 200],
      'the task was read again under the new session',
    );
    assert.equal(liveSessions('reboot'), 1);
    const fw = await firmware('reboot', 'FW_BMC_0');
    assert.equal(fw.version, BMC_FW.version);
    assert.equal(fw.staged, undefined, 'nothing was staged by the interrupted update');

    await clearFaults('reboot');
    const again = await pushFirmware(c, { filePath: file });
    assert.equal(
      (await wait(c, again.taskUri)).outcome,
      'succeeded',
      'with the fault cleared the same package installs',
    );
    await c.close();
    assert.equal(liveSessions('reboot'), 0, 'close() logged out');
  });

  it('task failure: waitForTask reports failed with the BMC’s reason', async () => {
    const c = client('taskfail');
    await setFaults('taskfail', { taskFailure: true });
    const pushed = await pushFirmware(c, {
      filePath: await writePackage('taskfail.fwpkg', bmcPackage('GB200Nvl-25.09-1', BMC_FW.stamp + 1)),
    });
    const result = await wait(c, pushed.taskUri);
    assert.equal(result.outcome, 'failed');
    assert.equal(result.taskState, 'Exception');
    assert.equal(result.taskStatus, 'Critical');
    assert.equal(result.failureReason, "Installation of image 'taskfail.fwpkg' to 'FW_BMC_0' failed.");
    assert.ok(result.messages.some((m) => /^Update\.1\.\d+\.ApplyFailed$/.test(m.MessageId ?? '')));
    assert.equal((await firmware('taskfail', 'FW_BMC_0')).staged, undefined);
    await clearFaults('taskfail');
  });

  it('stale link: a 404 on a cached link makes the client re-discover from the service root', async () => {
    const c = client('stale', { auth: 'basic' });
    const baseline = await getFirmwareInventory(c);
    // The inventory's link, kept with the UpdateService's other links since the first read.
    await setFaults('stale', { staleLinks: ['/redfish/v1/UpdateService/FirmwareInventory'] });
    await clearRequests('stale');
    assert.deepEqual(await getFirmwareInventory(c), baseline);
    const log = await requests('stale');
    assert.deepEqual(
      log.slice(0, 4).map((r) => [r.method, r.path, r.status]),
      [
        ['GET', '/redfish/v1/UpdateService/FirmwareInventory', 404],
        ['GET', ROOT, 200],
        ['GET', '/redfish/v1/UpdateService', 200],
        ['GET', '/redfish/v1/UpdateService/FirmwareInventory', 200],
      ],
    );
    assert.equal(only(log, 'GET', ROOT).length, 1, 'one re-discovery');
    assert.ok(log.slice(1).every((r) => r.status === 200));

    // A cached system link, through a session this time.
    const s = client('stale');
    assert.equal(await getPowerState(s), 'Off');
    await setFaults('stale', { staleLinks: [SYSTEM] });
    await clearRequests('stale');
    assert.equal(await getPowerState(s), 'Off');
    assert.deepEqual(
      (await requests('stale')).map((r) => [r.path, r.status]),
      [
        [SYSTEM, 404],
        [ROOT, 200],
        ['/redfish/v1/Systems', 200],
        [SYSTEM, 200],
      ],
    );
    await clearFaults('stale');
  });

  it('session exhaustion: typed Unavailable, no call made without a session, no session leaked', async () => {
    await setFaults('sess', { sessionExhaustion: true });
    const c = client('sess', { maxAttempts: 3 });
    const err = await rejection(getPowerState(c));
    assert.equal(err.code, 'Unavailable');
    assert.equal(err.status, 503);
    assert.equal(err.uri, SESSIONS);
    assert.match(err.causeText, /simultaneous sessions exceeding the limit/);
    const log = await requests('sess');
    assert.deepEqual(
      log.map((r) => [r.method, r.path, r.status]),
      [
        ['GET', ROOT, 200],
        ['POST', SESSIONS, 503],
        ['POST', SESSIONS, 503],
        ['POST', SESSIONS, 503],
      ],
    );
    assert.equal(liveSessions('sess'), 0);

    await clearFaults('sess');
    await clearRequests('sess');
    const states = await Promise.all([getPowerState(c), getPowerState(c), getPowerState(c), getPowerState(c)]);
    assert.deepEqual(states, ['Off', 'Off', 'Off', 'Off']);
    assert.equal(only(await requests('sess'), 'POST', SESSIONS).length, 1, 'concurrent calls share one login');
    assert.equal(liveSessions('sess'), 1);
    await c.close();
    assert.equal(liveSessions('sess'), 0);
  });

  it(`session limit reached for real: the extra client gets Unavailable; closing every client frees every \
session`, async () => {
    const holders = [client('limit'), client('limit')];
    for (const h of holders) assert.equal(await getPowerState(h), 'Off');
    assert.equal(liveSessions('limit'), 2);
    const extra = client('limit', { maxAttempts: 2 });
    const err = await rejection(getPowerState(extra));
    assert.equal(err.code, 'Unavailable');
    assert.equal(err.status, 503);
    assert.equal(liveSessions('limit'), 2);
    await Promise.all([...holders, extra].map((h) => h.close()));
    assert.equal(liveSessions('limit'), 0);
    const logouts = (await requests('limit')).filter((r) => r.method === 'DELETE' && r.path.startsWith(`${SESSIONS}/`));
    assert.deepEqual(
      logouts.map((r) => r.status),
      [204, 204],
      'one logout per session, none for the client that never got one',
    );
  });

  it(`firmware push of a matching package: the task completes and the new version shows only after the reset / power \
cycle`, async () => {
    const c = client('fw');
    const file = await writePackage('bmc.fwpkg', bmcPackage('GB200Nvl-25.09-1', BMC_FW.stamp + 1));
    const pushed = await pushFirmware(c, { filePath: file });
    assert.equal(pushed.status, 202);
    const result = await wait(c, pushed.taskUri);
    assert.equal(result.outcome, 'succeeded');
    assert.equal(result.percentComplete, 100);
    const upload = only(await requests('fw'), 'POST', PUSH);
    assert.deepEqual(
      upload.map((r) => r.body),
      [
        {
          UpdateParameters: { Targets: [], ForceUpdate: false },
          UpdateFile: { filename: 'bmc.fwpkg', size: (await stat(file)).size },
        },
      ],
    );

    assert.equal(versionOf(await getFirmwareInventory(c), 'FW_BMC_0'), BMC_FW.version, 'staged, not running yet');
    assert.equal((await firmware('fw', 'FW_BMC_0')).staged, 'GB200Nvl-25.09-1');
    await resetManager(c, 'bmc');
    await eventually(
      async () => (versionOf(await getFirmwareInventory(c), 'FW_BMC_0') === 'GB200Nvl-25.09-1' ? true : undefined),
      'new BMC version after the reboot',
    );
    const log = await requests('fw');
    assert.ok(
      log.some((r) => r.status === 503),
      'the BMC was down for its reboot',
    );
    assert.equal(only(log, 'POST', SESSIONS).length, 2, 'the session lost in the reboot was re-created once');

    // A host-side (HGX) image activates when the host power-cycles.
    const gpu = await writePackage(
      'gpu.fwpkg',
      pldmPackage(GPU_FW.device!, [
        { identifier: GPU_FW.componentId!, stamp: GPU_FW.stamp + 5, version: '97.00.B0.00.01' },
      ]),
    );
    const gpuPush = await pushFirmware(c, { filePath: gpu, targets: ['/redfish/v1/Chassis/HGX_Chassis_0'] });
    assert.equal((await wait(c, gpuPush.taskUri)).outcome, 'succeeded');
    assert.equal(versionOf(await getFirmwareInventory(c), 'HGX_FW_GPU_0'), GPU_FW.version);
    await applyPowerAction(c, 'power-cycle');
    await eventually(
      async () => (versionOf(await getFirmwareInventory(c), 'HGX_FW_GPU_0') === '97.00.B0.00.01' ? true : undefined),
      'new GPU version after the power cycle',
    );
    assert.equal(await getPowerState(c), 'On');
  });

  it('a package for another tray is refused: InvalidArgument, not resent, no task', async () => {
    const c = client('wrongtray');
    // A gb200 BMC-tray package pushed to a gb300 tray: no device record matches.
    assert.notEqual(BMC_FW.device, gb300.firmware.find((f) => f.id === 'FW_BMC_0')!.device);
    const file = await writePackage('gb200-on-gb300.fwpkg', bmcPackage('GB200Nvl-25.09-1', 0x7fffffff));
    const err = await rejection(pushFirmware(c, { filePath: file }));
    assert.equal(err.code, 'InvalidArgument');
    assert.equal(err.status, 400);
    assert.equal(err.uri, PUSH);
    assert.equal(err.retryable, false);
    assert.deepEqual(
      only(await requests('wrongtray'), 'POST', PUSH).map((r) => r.status),
      [400],
    );
    assert.equal(
      (await c.get<{ 'Members@odata.count': number }>('/redfish/v1/TaskService/Tasks'))['Members@odata.count'],
      0,
    );
  });

  it('a downgrade fails without ForceUpdate and installs with it', async () => {
    const c = client('downgrade');
    const file = await writePackage('older.fwpkg', bmcPackage('GB200Nvl-24.10-1', BMC_FW.stamp - 1));
    const refused = await wait(c, (await pushFirmware(c, { filePath: file })).taskUri);
    assert.equal(refused.outcome, 'failed');
    assert.equal(refused.taskState, 'Exception');
    assert.match(
      refused.failureReason ?? '',
      /FW_BMC_0 has detected errors of type 'Component comparison stamp is lower'/,
    );
    assert.equal((await firmware('downgrade', 'FW_BMC_0')).staged, undefined);

    const forced = await wait(c, (await pushFirmware(c, { filePath: file, forceUpdate: true })).taskUri);
    assert.equal(forced.outcome, 'succeeded');
    assert.equal((await firmware('downgrade', 'FW_BMC_0')).staged, 'GB200Nvl-24.10-1');
    const params = only(await requests('downgrade'), 'POST', PUSH).map(
      (r) => (r.body as { UpdateParameters: unknown }).UpdateParameters,
    );
    assert.deepEqual(params, [
      { Targets: [], ForceUpdate: false },
      { Targets: [], ForceUpdate: true },
    ]);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import type { ServerResponse } from 'node:http';
import {
  getFirmwareInventory,
  listTasks,
  readHardwareInventory,
  RedfishClient,
  RedfishError,
  type Link,
} from '../src/index.js';
import {
  captureDocument,
  credentials,
  expandedCollection,
  freePort,
  json,
  mockups,
  serve,
  staticRedfish,
  type TestServer,
} from './helpers/servers.js';

const INVENTORY = '/redfish/v1/UpdateService/FirmwareInventory';

// A collection's members in one request where the BMC offers $expand, one by one where it does not.
describe('collections read with $expand', () => {
  let sim: RedfishSimulator;
  const clients: RedfishClient[] = [];
  const clientOf = (baseUrl: string) => {
    const c = new RedfishClient({ baseUrl, credentials, retryBaseDelayMs: 5 });
    clients.push(c);
    return c;
  };
  before(async () => {
    const bmc = async (id: string, quirks = {}) => ({
      id,
      address: '127.0.0.1',
      port: await freePort(),
      ...credentials,
      profile: 'gb200-compute' as const,
      quirks,
    });
    sim = await startRedfishSimulator({
      bmcs: [await bmc('expands'), await bmc('plain', { noExpandQuery: true })],
      timeScale: 0.001,
    });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sim.close();
  });

  const inventoryReads = (id: string) =>
    sim
      .bmc(id)
      .log.filter((r) => r.method === 'GET' && r.path.startsWith(INVENTORY))
      .map((r) => r.path);

  it('one request for the whole firmware inventory, with what member-by-member reading finds', async () => {
    const expanded = await getFirmwareInventory(clientOf(sim.bmcUrl('expands')));
    const plain = await getFirmwareInventory(clientOf(sim.bmcUrl('plain')));
    assert.ok(expanded.components.length > 10);
    assert.deepEqual(expanded, plain);
    assert.deepEqual(inventoryReads('expands'), [INVENTORY]);
    assert.deepEqual(inventoryReads('plain'), [INVENTORY, ...plain.components.map((c) => c.uri)]);
  });

  it('a hardware inventory keeps every resource under its own URI, as read member by member', async () => {
    const read = (id: string) => readHardwareInventory(clientOf(sim.bmcUrl(id)), { source: { system: undefined } });
    const expanded = await read('expands');
    const plain = await read('plain');
    assert.deepEqual(expanded.inventory.firmware, plain.inventory.firmware);
    assert.equal(expanded.inventory.gpus.length, plain.inventory.gpus.length);
    assert.deepEqual(Object.keys(expanded.resources).sort(), Object.keys(plain.resources).sort());
    const collection = expanded.resources[INVENTORY] as { Members: object[] };
    assert.ok(collection.Members.every((m) => Object.keys(m).join() === '@odata.id'));
    const member = (collection.Members[0] as { '@odata.id': string })['@odata.id'];
    assert.deepEqual(expanded.resources[member], plain.resources[member]);
  });

  it('the task list too', async () => {
    sim.bmc('expands').tasks().create('Firmware update task');
    sim.bmc('expands').tasks().create('Firmware update task');
    const tasks = await listTasks(clientOf(sim.bmcUrl('expands')));
    assert.equal(tasks.length, 2);
    assert.ok(
      tasks.every((t) => t.uri === t['@odata.id'] && typeof t.TaskState === 'string'),
      JSON.stringify(tasks),
    );
    const memberReads = sim.bmc('expands').log.filter((r) => /\/TaskService\/Tasks\/./.test(r.path));
    assert.deepEqual(memberReads, []);
  });
});

describe('a BMC that advertises $expand', () => {
  // The DMTF rackmount mockup advertises ExpandQuery.NoLinks; `answer` says what its expanded listing is instead.
  const rackmount = `${mockups}/public-rackmount1`;
  const capture = staticRedfish(rackmount);
  const servers: TestServer[] = [];
  const clients: RedfishClient[] = [];
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(servers.map((s) => s.close()));
  });

  type Answer = (res: ServerResponse, expanded: Record<string, unknown>) => void;
  const bmc = async (answer?: Answer) => {
    const expandedReads: string[] = [];
    const server = await serve((req, res, path) => {
      if (!req.url?.includes('$expand')) return capture(req, res, path);
      expandedReads.push(path);
      const doc = captureDocument(rackmount, path.replace(/\/+$/, ''));
      const expanded = expandedCollection(rackmount, doc as Buffer);
      return answer ? answer(res, expanded) : json(res, 200, expanded);
    });
    servers.push(server);
    const client = new RedfishClient({ baseUrl: server.url, credentials, retryBaseDelayMs: 5, maxAttempts: 2 });
    clients.push(client);
    const memberReads = () => server.requests.filter((r) => r.path.startsWith(`${INVENTORY}/`)).map((r) => r.path);
    return { client, expandedReads, memberReads };
  };
  const ids = (inv: { components: { id: string }[] }) => inv.components.map((c) => c.id).sort();
  const fellBack = (why: string) => `${INVENTORY}: $expand advertised but failed (${why}); members read one by one`;

  it('and honours it: one request, no member read', async () => {
    const { client, expandedReads, memberReads } = await bmc();
    const inv = await getFirmwareInventory(client);
    assert.deepEqual(ids(inv), ['BIOS', 'BMC', 'SS']);
    assert.equal(inv.components.find((c) => c.id === 'BMC')?.version, '1.45.455b66-rev4');
    assert.deepEqual(expandedReads, [INVENTORY]);
    assert.deepEqual(memberReads(), []);
  });

  it('but ignores it: members read one by one, nothing to report', async () => {
    const { client, memberReads } = await bmc((res, expanded) =>
      json(res, 200, {
        ...expanded,
        Members: (expanded['Members'] as Link[]).map((m) => ({ '@odata.id': m['@odata.id'] })),
      }),
    );
    const inv = await getFirmwareInventory(client);
    assert.deepEqual(ids(inv), ['BIOS', 'BMC', 'SS']);
    assert.equal(memberReads().length, 3);
    assert.ok(!inv.warnings.some((w) => w.includes('$expand')), inv.warnings.join('\n'));
  });

  for (const [status, why] of [
    [400, 'HTTP 400'],
    [501, 'HTTP 501'],
    [500, 'HTTP 500'],
  ] as const)
    it(`and answers ${status}: members read one by one, reported, not asked again until invalidated`, async () => {
      const { client, expandedReads, memberReads } = await bmc((res) => json(res, status, { error: {} }));
      const inv = await getFirmwareInventory(client);
      assert.deepEqual(ids(inv), ['BIOS', 'BMC', 'SS']);
      assert.ok(inv.warnings.includes(fellBack(why)), inv.warnings.join('\n'));
      assert.equal(memberReads().length, 3);
      await getFirmwareInventory(client);
      assert.equal(expandedReads.length, 1);
      client.invalidate();
      await getFirmwareInventory(client);
      assert.equal(expandedReads.length, 2);
    });

  it('and answers something else than the collection: read plainly, reported', async () => {
    const { client } = await bmc((res, expanded) => json(res, 200, { ...expanded, Members: undefined }));
    const inv = await getFirmwareInventory(client);
    assert.deepEqual(ids(inv), ['BIOS', 'BMC', 'SS']);
    assert.ok(inv.warnings.includes(fellBack('Protocol')), inv.warnings.join('\n'));
  });

  it('a member sent with an error in its place (as bmcweb does) is read on its own', async () => {
    const { client, memberReads } = await bmc((res, expanded) => {
      const [first, ...rest] = expanded['Members'] as Record<string, unknown>[];
      const failed = { ...first, Version: undefined, error: { code: 'Base.1.8.InternalError' } };
      json(res, 200, { ...expanded, Members: [failed, ...rest] });
    });
    const inv = await getFirmwareInventory(client);
    assert.deepEqual(ids(inv), ['BIOS', 'BMC', 'SS']);
    assert.ok(inv.components.every((c) => typeof c.version === 'string'));
    assert.equal(memberReads().length, 1);
  });

  it('a member whose inline @odata.id leads off the BMC is read on its own, and refused', async () => {
    const { client } = await bmc((res, expanded) => {
      const [first, ...rest] = expanded['Members'] as Record<string, unknown>[];
      json(res, 200, { ...expanded, Members: [{ ...first, '@odata.id': 'http://elsewhere.example/x' }, ...rest] });
    });
    const err = await getFirmwareInventory(client).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof RedfishError && err.code === 'Protocol', String(err));
    assert.match(err.causeText, /leads off this BMC/);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import { getFirmwareInventory, listTasks, readHardwareInventory, RedfishClient } from '../src/index.js';
import { credentials, freePort, json, mockups, serve, staticRedfish, type TestServer } from './helpers/servers.js';

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
  const rackmount = `${mockups}/public-rackmount1`;
  let server: TestServer;
  let client: RedfishClient | undefined;
  after(async () => {
    await client?.close();
    await server?.close();
  });

  it('and refuses it: members read one by one, the refusal reported', async () => {
    const capture = staticRedfish(rackmount);
    server = await serve((req, res, path) =>
      req.url?.includes('$expand')
        ? json(res, 501, { error: { code: 'Base.1.8.QueryNotSupported' } })
        : capture(req, res, path),
    );
    client = new RedfishClient({ baseUrl: server.url, credentials, retryBaseDelayMs: 5 });
    const inv = await getFirmwareInventory(client);
    assert.deepEqual(inv.components.map((c) => c.id).sort(), ['BIOS', 'BMC', 'SS']);
    assert.ok(
      inv.warnings.includes(`${INVENTORY}: $expand advertised but refused (HTTP 501); members read one by one`),
      inv.warnings.join('\n'),
    );
    assert.equal(server.requests.filter((r) => r.path.startsWith(`${INVENTORY}/`)).length, 3);
  });
});

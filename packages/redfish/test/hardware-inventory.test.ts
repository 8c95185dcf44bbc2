import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readHardwareInventory, RedfishClient, RedfishError } from '../src/index.js';
import {
  credentials,
  extractGh200,
  json,
  mockups,
  serve,
  staticRedfish,
  type Handler,
  type TestServer,
} from './helpers/servers.js';

// The inventory reader against captures served as they were recorded: NVIDIA's GH200 BMC (the HGX layout GB200
// trays share) and DMTF's power-shelf mockup, with their quirks.

const GPU_1 = '/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_1';

/** The capture, except that some paths answer with another status. */
function answering(inner: Handler, overrides: Record<string, number>): Handler {
  return (req, res, path) => {
    const status = overrides[path];
    return status ? json(res, status, { error: { message: `status ${status}` } }) : inner(req, res, path);
  };
}

describe('hardware inventory: NVIDIA GH200 capture', () => {
  let capture: ReturnType<typeof extractGh200>;
  const servers: TestServer[] = [];
  const clients: RedfishClient[] = [];
  const open = async (handler: Handler) => {
    const server = await serve(handler);
    servers.push(server);
    const client = new RedfishClient({ baseUrl: server.url, credentials, maxAttempts: 1 });
    clients.push(client);
    return { server, client };
  };
  before(() => {
    capture = extractGh200();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(servers.map((s) => s.close()));
    capture.cleanup();
  });

  it('reads the host CPUs once, the HGX baseboard GPUs with their ports, memory, NICs and firmware', async () => {
    const { server, client } = await open(staticRedfish(capture.root));
    const progress: number[] = [];
    const { inventory: inv, resources } = await readHardwareInventory(client, {
      source: { system: undefined },
      onProgress: (n) => progress.push(n),
    });
    assert.equal(inv.identity.uri, '/redfish/v1/Systems/System_0');
    // The baseboard lists the CPUs again as HGX_CPU_n: counted once, from the host.
    assert.deepEqual(
      inv.cpus.map((c) => [c.id, c.model, c.serialNumber, c.cores]),
      [
        ['CPU_0', 'Grace A02', '0x00000001780A0185100000000CFF80C0', 72],
        ['CPU_1', 'Grace A02', '0x00000001780A01851000000008FF0100', 72],
      ],
    );
    assert.equal(inv.cpus[0]!.partNumber, undefined, 'an empty PartNumber is no part number');
    assert.deepEqual(
      inv.gpus.map((g) => [g.id, g.partNumber, g.serialNumber, g.firmwareVersion]),
      [
        ['GPU_0', '2342-888-A1', '1640124000234', '96.00.A6.00.01'],
        ['GPU_1', '2342-888-A1', '1640124000373', '96.00.A6.00.01'],
      ],
    );
    assert.deepEqual(inv.summary, { cpuCount: 2, cpuCores: 144, memoryGiB: 960, gpuMemoryGiB: 190 });
    assert.deepEqual(
      inv.memory.map((m) => [m.id, m.capacityMiB]),
      [
        ['ProcessorModule_0_Memory_0', 491520],
        ['ProcessorModule_1_Memory_0', 491520],
        ['GPU_0_DRAM_0', 97871],
        ['GPU_1_DRAM_0', 98256],
      ],
    );
    // GH200 has no NVSwitch: 18 ports per GPU, none naming a far end, and no rack position.
    assert.equal(inv.nvlinkPorts.length, 36);
    assert.ok(inv.nvlinkPorts.every((p) => p.remotePortId === undefined && p.linkStatus === 'LinkUp'));
    assert.equal(inv.location, undefined);
    assert.deepEqual(inv.nvswitches, []);
    assert.deepEqual(
      inv.nics.map((n) => `${n.owner}/${n.id}`),
      ['BMC_0/eth0', 'BMC_0/eth1', 'BMC_0/hmcusb0', 'BMC_0/hostusb0', 'HGX_BMC_0/usb0'],
    );
    assert.equal(inv.nics[0]!.macAddress, '3c:6d:66:01:a8:cd');
    assert.equal(inv.firmware.length, 19);
    assert.ok(inv.warnings.some((w) => w.includes('HGX_FW_FPGA_0 listed more than once')));

    // Every resource the parse used is kept, and each was fetched once.
    const gets = server.requests.filter((r) => r.method === 'GET').map((r) => r.path.replace(/\/$/, ''));
    assert.deepEqual(Object.keys(resources).sort(), [...new Set(gets)].sort());
    // Only the Systems collection is read twice: once to find the host, once for its GPU baseboard.
    assert.deepEqual(
      gets.filter((g, i) => gets.indexOf(g) !== i),
      ['/redfish/v1/Systems'],
    );
    assert.ok(resources[`${GPU_1}/Ports/NVLink_17`]);
    assert.equal(progress.at(-1), gets.length - 1, 'progress counts every read after the service root');
  });

  it('a listed GPU that answers 404 is left out and named in the warnings', async () => {
    const { client } = await open(answering(staticRedfish(capture.root), { [GPU_1]: 404 }));
    const { inventory } = await readHardwareInventory(client, { source: { system: undefined } });
    assert.deepEqual(
      inventory.gpus.map((g) => g.id),
      ['GPU_0'],
    );
    assert.equal(inventory.nvlinkPorts.length, 18);
    assert.ok(inventory.warnings.includes(`processor ${GPU_1} is listed but the BMC answers 404 for it`));
  });

  it('any other failure is thrown, naming the BMC, the URI and the cause', async () => {
    const port = `${GPU_1}/Ports/NVLink_3`;
    const { server, client } = await open(answering(staticRedfish(capture.root), { [port]: 500 }));
    await assert.rejects(readHardwareInventory(client, { source: { system: undefined } }), (e: unknown) => {
      assert.ok(e instanceof RedfishError);
      assert.deepEqual([e.code, e.bmc, e.uri, e.status], ['Internal', server.url, port, 500]);
      assert.match(e.message, /status 500/);
      return true;
    });
  });

  it('a device that names a system the BMC does not have is refused', async () => {
    const { client } = await open(staticRedfish(capture.root));
    await assert.rejects(readHardwareInventory(client, { source: { system: 'System_9' } }), /no system System_9/);
  });
});

describe('hardware inventory: DMTF public-power-shelf', () => {
  let server: TestServer;
  let client: RedfishClient;
  before(async () => {
    server = await serve(staticRedfish(join(mockups, 'public-power-shelf')));
    client = new RedfishClient({ baseUrl: server.url, credentials });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('reads the shelf chassis as the device and its bays, empty ones as Absent', async () => {
    const { inventory: inv } = await readHardwareInventory(client, { source: { chassis: 'PowerShelf' } });
    assert.deepEqual(
      [inv.identity.serialNumber, inv.identity.partNumber, inv.identity.model, inv.identity.assetTag],
      ['29347ZT536', 'AA-23', 'ZAP33000', 'PDX-92381'],
    );
    assert.deepEqual(
      inv.powerSupplies.map((p) => [p.id, p.status?.state]),
      [
        ['Bay1', 'Enabled'],
        ['Bay3', 'Absent'],
        ['Bay4', 'Absent'],
        ['Bay5', 'Absent'],
        ['Bay6', 'Absent'],
      ],
    );
    assert.deepEqual([inv.powerSupplies[0]!.serialNumber, inv.powerSupplies[0]!.partNumber], ['3488247', '23456-133']);
    assert.deepEqual(
      inv.nics.map((n) => [n.owner, n.id, n.ipv4Addresses]),
      [['BMC', 'Dedicated', ['192.168.0.10']]],
    );
    assert.deepEqual(inv.firmware, []);
    assert.ok(inv.warnings.includes('the service root has no UpdateService: no firmware inventory'));
    assert.ok(inv.warnings.some((w) => w.includes('/Bay3 listed more than once')));
  });
});

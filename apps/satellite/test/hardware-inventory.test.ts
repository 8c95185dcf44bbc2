import assert from 'node:assert/strict';
import { createHash, randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { pino } from 'pino';
import type { BmcTarget, HardwareInventoryReading, NodeType } from '@fleet/domain';
import { startAdminServer, startRedfishSimulator, type BmcSpec, type RedfishSimulator } from '@fleet/simulators';
import {
  createHardwareInventoryActivity,
  type HardwareInventoryHeartbeat,
} from '../src/activities/hardware-inventory.js';
// The new domain modules by path until @fleet/domain exports them.
import { serialsOf } from '../../../packages/domain/src/hardware-inventory.js';
import { checkProfile, hardwareProfile } from '../../../packages/domain/src/hardware-profiles.js';
import { checkRackTopology } from '../../../packages/domain/src/nvlink-topology.js';
import { mockEnv, secrets } from './helpers/devices.js';
import { openTestJournal } from './helpers/journal.js';

const testJournal = await openTestJournal();

// readHardwareInventory against the BMC simulator playing one whole GB200 NVL72 rack (18 compute trays, 9 switch
// trays) and a power shelf; parts are swapped and faulted through the simulator's admin API.

const pad = (n: number) => String(n).padStart(2, '0');
const computeIds = Array.from({ length: 18 }, (_, i) => `r1-ct${pad(i + 1)}`);
const switchIds = Array.from({ length: 9 }, (_, i) => `r1-nvsw${pad(i + 1)}`);
const NETBOX_SERIAL = 'NB-R1-CT01';

describe('readHardwareInventory activity', () => {
  let sim: RedfishSimulator;
  let admin: { port: number; close(): Promise<void> };
  const nodeTypes = new Map<string, NodeType>();
  const stored = new Map<string, Buffer>();
  const activity = createHardwareInventoryActivity({
    secrets,
    log: pino({ level: 'silent' }),
    pollIntervalMs: 20,
    journal: testJournal,
    redfish: { connectTimeoutMs: 500, requestTimeoutMs: 2_000 },
    documents: { put: async (digest, body) => void stored.set(digest, body) },
  });

  before(async () => {
    const block = `127.${randomInt(2, 250)}.${randomInt(0, 250)}`;
    const port = 20_000 + randomInt(0, 20_000);
    const specs: BmcSpec[] = [];
    const add = (id: string, nodeType: NodeType, extra: Partial<BmcSpec>) => {
      nodeTypes.set(id, nodeType);
      specs.push({
        id,
        address: `${block}.${specs.length + 1}`,
        port,
        username: 'admin',
        password: 'sekret',
        ...extra,
      });
    };
    for (const id of computeIds)
      add(id, 'compute_gb200_nvidia', {
        profile: 'gb200-compute',
        rack: 'r1',
        powerState: 'On',
        ...(id === 'r1-ct01' ? { serialNumber: NETBOX_SERIAL } : {}),
      });
    for (const id of switchIds)
      add(id, 'switch_gb200_nvidia', { profile: 'nvswitch-tray', rack: 'r1', powerState: 'On' });
    add('r1-ps01', 'powershelf_gb200_liteon', { profile: 'powershelf-liteon' });
    sim = await startRedfishSimulator({ bmcs: specs, timeScale: 0.01 });
    admin = await startAdminServer(
      sim,
      specs.map((s) => s.id),
      '127.0.0.1',
      0,
    );
  });
  after(async () => {
    await admin?.close();
    await sim?.close();
  });

  const target = (id: string, credentialRef = 'bmc/good'): BmcTarget => ({
    deviceId: id,
    nodeType: nodeTypes.get(id)!,
    bmcUrl: sim.bmcUrl(id),
    credentialRef,
  });
  const read = (id: string, env = mockEnv()) =>
    env.run(activity.readHardwareInventory, { target: target(id) }) as Promise<HardwareInventoryReading>;
  const simAdmin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${admin.port}${path}`, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    assert.ok(res.ok, `${method} ${path}: ${res.status}`);
    return res.status === 204 ? undefined : ((await res.json()) as Record<string, unknown>);
  };

  it('reads a GB200 compute tray: counts, serials, rack place, NICs, firmware; it matches its profile', async () => {
    const env = mockEnv();
    const beats: HardwareInventoryHeartbeat[] = [];
    env.on('heartbeat', (d: HardwareInventoryHeartbeat) => beats.push(d));
    const { deviceId, inventory: inv, document } = await read('r1-ct01', env);
    assert.equal(deviceId, 'r1-ct01');
    assert.deepEqual([inv.deviceId, inv.nodeType, inv.kind], ['r1-ct01', 'compute_gb200_nvidia', 'compute']);
    assert.equal(inv.identity.serialNumber, NETBOX_SERIAL);
    assert.equal(inv.identity.partNumber, '699-24975-0001-000');
    assert.deepEqual(inv.summary, { cpuCount: 2, cpuCores: 144, memoryGiB: 960, gpuCount: 4, gpuMemoryGiB: 740 });
    assert.deepEqual(
      inv.cpus.map((c) => [c.id, c.model, c.cores]),
      [
        ['CPU_0', 'Grace A02', 72],
        ['CPU_1', 'Grace A02', 72],
      ],
    );
    assert.deepEqual(
      inv.gpus.map((g) => [g.id, g.model, g.partNumber, g.firmwareVersion]),
      [0, 1, 2, 3].map((i) => [`GPU_${i}`, 'NVIDIA GB200', '2941-886-A1', '97.00.A0.00.01']),
    );
    const serials = [...inv.cpus, ...inv.gpus, ...inv.memory].map((p) => p.serialNumber!);
    assert.ok(
      serials.every((s) => /^\d{13}$/.test(s)),
      serials.join(' '),
    );
    assert.equal(new Set(serials).size, serials.length, 'every part has its own serial');
    assert.deepEqual(
      inv.memory.map((m) => [m.id, m.capacityMiB]),
      [
        ['ProcessorModule_0_Memory_0', 491_520],
        ['ProcessorModule_1_Memory_0', 491_520],
        ...[0, 1, 2, 3].map((i) => [`GPU_${i}_DRAM_0`, 189_471]),
      ],
    );
    assert.equal(inv.nvlinkPorts.length, 4 * 18);
    assert.deepEqual(inv.nvlinkPorts[6], {
      part: 'GPU_0',
      port: 'NVLink_6',
      remotePortId: 'SIMRACKR1/Slot_14/NVSwitch_0/NVLink_0',
      linkStatus: 'LinkUp',
      health: 'OK',
    });
    assert.deepEqual(inv.location, {
      chassisSerialNumber: 'SIMRACKR1',
      slotNumber: 1,
      slotIndex: 0,
      traySerialNumber: NETBOX_SERIAL,
    });
    const eth0 = inv.nics.find((n) => n.owner === 'BMC_0' && n.id === 'eth0');
    assert.equal(eth0?.ipv4Addresses[0], new URL(sim.bmcUrl('r1-ct01')).hostname);
    assert.match(eth0?.macAddress ?? '', /^02(:[0-9a-f]{2}){5}$/);
    assert.ok(inv.nics.some((n) => n.owner === 'HGX_BMC_0' && n.id === 'usb0'));
    assert.deepEqual(
      inv.firmware.find((c) => c.id === 'FW_BMC_0'),
      { id: 'FW_BMC_0', version: 'GB200Nvl-25.06-4' },
    );
    assert.equal(inv.firmware.filter((c) => c.id.startsWith('HGX_FW_GPU_')).length, 4);
    assert.deepEqual(inv.warnings, []);
    assert.deepEqual(checkProfile(inv, hardwareProfile('compute_gb200_nvidia')!), []);

    // The document: every resource read, canonical JSON, stored under its digest; only the digest is returned.
    assert.match(document.digest, /^sha256:[0-9a-f]{64}$/);
    const body = stored.get(document.digest)!;
    assert.equal(`sha256:${createHash('sha256').update(body).digest('hex')}`, document.digest);
    assert.equal(body.length, document.bytes);
    const resources = JSON.parse(body.toString()) as Record<string, { SerialNumber?: string }>;
    assert.equal(Object.keys(resources).length, document.resources);
    assert.equal(resources['/redfish/v1/Systems/System_0']?.SerialNumber, NETBOX_SERIAL);
    assert.ok(document.resources > 100, `${document.resources} resources`);
    assert.ok(beats.length >= 1 && beats[0]!.resources >= 1, 'heartbeats the resources read');
    assert.equal((await read('r1-ct01')).document.digest, document.digest, 'the same answers, the same digest');
  });

  it('a swapped GPU has a new serial in the next read; a profile pinned to the old one names it', async () => {
    const before = (await read('r1-ct02')).inventory;
    const swap = (await simAdmin('POST', '/bmcs/r1-ct02/health/swap', { part: 'gpu', gpu: 2 }))!;
    assert.equal(swap['previousSerialNumber'], before.gpus[2]!.serialNumber);
    const { inventory: after, document } = await read('r1-ct02');
    assert.equal(after.gpus[2]!.serialNumber, swap['serialNumber']);
    assert.notEqual(after.gpus[2]!.serialNumber, before.gpus[2]!.serialNumber);
    assert.ok(stored.has(document.digest));

    const pinned = hardwareProfile('compute_gb200_nvidia', { serials: serialsOf(before) })!;
    const differences = checkProfile(after, pinned);
    // The GPU's HBM went with it (a new serial too); nothing else changed.
    assert.deepEqual(
      differences.map((d) => [d.code, d.subject, d.expected, d.actual]),
      [
        ['serial_number', 'GPU_2', before.gpus[2]!.serialNumber, after.gpus[2]!.serialNumber],
        ['serial_number', 'GPU_2_DRAM_0', before.memory[4]!.serialNumber, after.memory[4]!.serialNumber],
      ],
    );
    assert.deepEqual(checkProfile(after, hardwareProfile('compute_gb200_nvidia')!), [], 'unpinned: still healthy');
  });

  it('a tray whose serial is not the one NetBox holds is named', async () => {
    const { inventory } = await read('r1-ct01');
    const d = checkProfile(inventory, hardwareProfile('compute_gb200_nvidia', { serials: { tray: 'NB-OTHER' } })!);
    assert.deepEqual(
      d.map((x) => x.message),
      [`r1-ct01 serial number is ${NETBOX_SERIAL}, expected NB-OTHER`],
    );
  });

  it('a GPU fault, a link fault and a missing GPU make checkProfile name the part', async () => {
    await simAdmin('PUT', '/bmcs/r1-ct03/health/faults', {
      faults: [
        { part: 'gpu', gpu: 1, reason: 'XID 79: fell off the bus' },
        { part: 'nvlink', gpu: 3, port: 9 },
      ],
    });
    try {
      const { inventory } = await read('r1-ct03');
      const d = checkProfile(inventory, hardwareProfile('compute_gb200_nvidia')!);
      assert.deepEqual(
        d.map((x) => `${x.code} ${x.subject}`),
        ['nvlink_health GPU_3/NVLink_9', 'health GPU_1'],
      );
      assert.match(d[1]!.message, /GPU_1 health is Critical: .*XID 79: fell off the bus/);
      assert.match(d[0]!.message, /link LinkDown/);
      // The simulator cannot remove a GPU; one the BMC no longer lists is named by its number.
      const gone = { ...inventory, gpus: inventory.gpus.filter((g) => g.id !== 'GPU_0') };
      assert.ok(checkProfile(gone, hardwareProfile('compute_gb200_nvidia')!).some((x) => x.subject === 'GPU_0'));
    } finally {
      await simAdmin('DELETE', '/bmcs/r1-ct03/health/faults');
    }
  });

  it('reads a switch tray (NVSwitch chips, ports) and a power shelf (PSUs); each matches its profile', async () => {
    const sw = (await read('r1-nvsw04')).inventory;
    assert.deepEqual(
      sw.nvswitches.map((s) => s.id),
      ['NVSwitch_0', 'NVSwitch_1'],
    );
    assert.equal(sw.nvlinkPorts.length, 2 * 72);
    assert.deepEqual(sw.location, {
      chassisSerialNumber: 'SIMRACKR1',
      slotNumber: 14,
      slotIndex: 3,
      traySerialNumber: sw.identity.serialNumber,
    });
    assert.deepEqual(checkProfile(sw, hardwareProfile('switch_gb200_nvidia')!), []);
    const shelf = (await read('r1-ps01')).inventory;
    assert.equal(shelf.identity.uri, '/redfish/v1/Chassis/powershelf');
    assert.deepEqual(
      shelf.powerSupplies.map((p) => [p.id, p.partNumber]),
      [0, 1, 2, 3, 4, 5].map((i) => [`PSU_${i}`, 'PS-5501-1L-A01']),
    );
    assert.deepEqual(shelf.nvlinkPorts, []);
    assert.deepEqual(checkProfile(shelf, hardwareProfile('powershelf_gb200_liteon')!), []);
  });

  it('the whole rack: the MNNVLink topology is complete, and an absent tray is named with its links', async () => {
    const inventories = new Map<string, HardwareInventoryReading['inventory']>();
    for (const id of [...computeIds, ...switchIds]) inventories.set(id, (await read(id)).inventory);
    const all = [...inventories.values()];
    const full = checkRackTopology(all);
    assert.deepEqual(full.issues, []);
    assert.deepEqual([full.complete, full.rack, full.links], [true, 'SIMRACKR1', 18 * 4 * 18]);

    const noSwitch = checkRackTopology(all.filter((t) => t.deviceId !== 'r1-nvsw03'));
    assert.equal(noSwitch.complete, false);
    assert.deepEqual(
      noSwitch.issues.map((i) => [i.code, i.subject, i.links?.length]),
      [['tray_missing', 'slot 13', 144]],
    );
    assert.ok(noSwitch.issues[0]!.links!.includes('r1-ct01 GPU_0/NVLink_4 → Slot_13/NVSwitch_0/NVLink_0'));

    const noCompute = checkRackTopology(all.filter((t) => t.deviceId !== 'r1-ct05'));
    assert.deepEqual(
      noCompute.issues.map((i) => [i.code, i.subject, i.links?.length]),
      [['tray_missing', 'slot 5', 72]],
    );
  });

  it('a compute tray that is off: links down on both sides, the cabling still complete', async () => {
    await fetch(`${sim.bmcUrl('r1-ct18')}/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('admin:sekret').toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ ResetType: 'ForceOff' }),
    });
    const trays = [];
    for (const id of ['r1-ct18', ...switchIds]) trays.push((await read(id)).inventory);
    const r = checkRackTopology(trays);
    assert.deepEqual(
      r.issues.map((i) => i.subject),
      computeIds.slice(0, 17).map((_, t) => `slot ${t < 10 ? t + 1 : t + 10}`),
      'only the trays left out are named',
    );
    assert.equal(r.linksDown.length, 72 + 72, 'the tray that is off: its 72 GPU ports and the 72 switch ports');
    assert.deepEqual(checkProfile(trays[0]!, hardwareProfile('compute_gb200_nvidia')!), [], 'off is not a fault');
  });

  it('failures name the device, the URI and the cause; cancellation stops the read', async () => {
    const wrongPassword = createHardwareInventoryActivity({
      secrets: { resolve: async () => ({ username: 'admin', password: 'wrong' }) },
      log: pino({ level: 'silent' }),
      pollIntervalMs: 20,
      journal: testJournal,
      redfish: { connectTimeoutMs: 500, requestTimeoutMs: 2_000 },
    });
    await assert.rejects(mockEnv().run(wrongPassword.readHardwareInventory, { target: target('r1-ct04') }), (e) => {
      assert.ok(e instanceof ApplicationFailure);
      assert.equal(e.type, 'UNAUTHENTICATED');
      assert.equal(e.nonRetryable, true);
      assert.match(
        e.message,
        /^r1-ct04: reading the hardware inventory: Unauthenticated: http:\/\/\S+ \/redfish\/v1\S*: /,
      );
      assert.deepEqual(Object.keys(e.details?.[0] as object).sort(), ['bmc', 'deviceId', 'status', 'uri']);
      return true;
    });
    await assert.rejects(
      mockEnv().run(activity.readHardwareInventory, { target: target('r1-ct04', 'bmc/none') }),
      (e) => e instanceof ApplicationFailure && e.type === 'FAILED_PRECONDITION' && /^r1-ct04: /.test(e.message),
    );

    const env = mockEnv();
    env.on('heartbeat', () => env.cancel());
    await assert.rejects(read('r1-ct04', env), CancelledFailure);
    const requests = sim.bmc('r1-ct04').log.length;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(sim.bmc('r1-ct04').log.length, requests, 'nothing more is sent after the cancellation');
  });
});

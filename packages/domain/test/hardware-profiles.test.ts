import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serialsOf, type HardwareInventory, type NvlinkPort } from '../src/hardware-inventory.js';
import {
  checkProfile,
  compareFirmwareVersions,
  hardwareProfile,
  type ProfileDifference,
} from '../src/hardware-profiles.js';
import { checkRackTopology, remotePortIdOf, type TopologyTray } from '../src/nvlink-topology.js';

// Fixtures follow NVL72 cabling as docs/hardware-inventory.md states it: GPU link l of GPU g on compute tray t goes to
// chip l mod 2 of switch tray l div 2, port 4t + g. Slots: compute 1-10 and 20-27, switch 11-19.
const RACK = 'RACK0001';
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const computeSlot = (t: number) => (t < 10 ? t + 1 : t + 10);
const switchSlot = (s: number) => 11 + s;

function gpuPorts(t: number, rack = RACK): NvlinkPort[] {
  return range(4).flatMap((g) =>
    range(18).map((l) => ({
      part: `GPU_${g}`,
      port: `NVLink_${l}`,
      remotePortId: remotePortIdOf(rack, switchSlot(Math.floor(l / 2)), `NVSwitch_${l % 2}`, `NVLink_${4 * t + g}`),
      linkStatus: 'LinkUp',
      health: 'OK',
    })),
  );
}

function switchPorts(s: number): NvlinkPort[] {
  return range(2).flatMap((c) =>
    range(72).map((q) => ({
      part: `NVSwitch_${c}`,
      port: `NVLink_${q}`,
      remotePortId: remotePortIdOf(RACK, computeSlot(Math.floor(q / 4)), `GPU_${q % 4}`, `NVLink_${2 * s + c}`),
      linkStatus: 'LinkUp',
      health: 'OK',
    })),
  );
}

const computeTray = (t: number): TopologyTray => ({
  deviceId: `ct${t + 1}`,
  nodeType: 'compute_gb200_nvidia',
  kind: 'compute',
  location: { chassisSerialNumber: RACK, slotNumber: computeSlot(t), slotIndex: t },
  nvlinkPorts: gpuPorts(t),
});
const switchTray = (s: number): TopologyTray => ({
  deviceId: `sw${s + 1}`,
  nodeType: 'switch_gb200_nvidia',
  kind: 'switch',
  location: { chassisSerialNumber: RACK, slotNumber: switchSlot(s), slotIndex: s },
  nvlinkPorts: switchPorts(s),
});
const fullRack = () => [...range(18).map(computeTray), ...range(9).map(switchTray)];

function computeInventory(): HardwareInventory {
  const status = { state: 'Enabled', health: 'OK', healthRollup: 'OK' };
  const part = (kind: 'cpu' | 'gpu' | 'memory', id: string, model: string, serial: string) => ({
    id,
    kind,
    uri: `/redfish/v1/x/${id}`,
    model,
    partNumber: kind === 'gpu' ? '2941-886-A1' : '900-2G548-0001-000',
    serialNumber: serial,
    status,
  });
  return {
    deviceId: 'ct1',
    nodeType: 'compute_gb200_nvidia',
    kind: 'compute',
    identity: { uri: '/redfish/v1/Systems/System_0', partNumber: '699-24975-0001-000', serialNumber: 'TRAY1' },
    summary: { cpuCount: 2, gpuCount: 4 },
    cpus: range(2).map((c) => part('cpu', `CPU_${c}`, 'Grace A02', `C${c}`)),
    gpus: range(4).map((g) => part('gpu', `GPU_${g}`, 'NVIDIA GB200', `G${g}`)),
    memory: range(4).map((g) => part('memory', `GPU_${g}_DRAM_0`, 'HBM3', `M${g}`)),
    nvswitches: [],
    powerSupplies: [],
    nics: [],
    firmware: [
      { id: 'FW_BMC_0', version: 'GB200Nvl-25.06-4' },
      { id: 'HGX_FW_GPU_0', version: '97.00.A0.00.01' },
    ],
    location: { chassisSerialNumber: RACK, slotNumber: 1, slotIndex: 0 },
    nvlinkPorts: gpuPorts(0),
    warnings: [],
  };
}

const gb200 = () => hardwareProfile('compute_gb200_nvidia')!;
const codes = (d: ProfileDifference[]) => d.map((x) => `${x.code} ${x.subject}`);

describe('hardware profiles from the hardware table', () => {
  it('derives each kind: a compute tray counts CPUs, GPUs and links; a switch tray chips; a shelf PSUs', () => {
    const compute = gb200();
    assert.equal(compute.kind, 'compute');
    assert.deepEqual(compute.cpus, { count: 2, model: 'Grace' });
    assert.deepEqual(compute.gpus, { count: 4, model: 'GB200', nvlinkPorts: 18 });
    assert.equal(compute.nvswitches, undefined);
    assert.equal(hardwareProfile('compute_gb300_nvidia')!.gpus!.model, 'GB300');
    assert.deepEqual(hardwareProfile('switch_gb300_nvidia')!.nvswitches, { count: 2, nvlinkPorts: 72 });
    assert.deepEqual(hardwareProfile('powershelf_gb200_delta')!.powerSupplies, { count: 6 });
    assert.ok(compute.partNumber, 'NVIDIA part numbers have a known shape');
    assert.equal(hardwareProfile('powershelf_gb200_liteon')!.partNumber, undefined, 'LITE-ON: no known shape');
    assert.equal(hardwareProfile('compute_gb200_wiwynn'), undefined);
    assert.equal(hardwareProfile('toString'), undefined, 'no prototype keys');
  });

  it('a healthy tray matches its profile', () => {
    assert.deepEqual(checkProfile(computeInventory(), gb200()), []);
  });

  it('a GPU fault names the GPU, with the condition the BMC gives', () => {
    const inv = computeInventory();
    inv.gpus[2]!.status = { state: 'Enabled', health: 'Critical', conditions: ['GPU_2: XID 79'] };
    const d = checkProfile(inv, gb200());
    assert.deepEqual(codes(d), ['health GPU_2']);
    assert.match(d[0]!.message, /GPU_2 health is Critical: GPU_2: XID 79/);
  });

  it('a missing GPU is named by its number, and its links go with it', () => {
    const inv = computeInventory();
    inv.gpus = inv.gpus.filter((g) => g.id !== 'GPU_3');
    inv.nvlinkPorts = inv.nvlinkPorts.filter((p) => p.part !== 'GPU_3');
    const d = checkProfile(inv, gb200());
    assert.deepEqual(codes(d), ['part_missing GPU_3']);
    assert.match(d[0]!.message, /GPU_3 is missing: the BMC lists 3 GPUs, expected 4/);
  });

  it('GPUs that are not numbered as NVIDIA numbers them are counted instead', () => {
    const inv = computeInventory();
    inv.gpus = inv.gpus.slice(0, 3).map((g, i) => ({ ...g, id: `Accel${i}` }));
    inv.nvlinkPorts = [];
    assert.deepEqual(codes(checkProfile(inv, { ...gb200(), gpus: { count: 4, nvlinkPorts: 0 } })), [
      'part_count GPU_*',
    ]);
  });

  it('a bay the BMC reports Absent is a missing part, whatever the BMC calls it', () => {
    const psu = (i: number, state = 'Enabled') => ({
      id: `Bay${i}`,
      kind: 'psu' as const,
      uri: `/redfish/v1/Chassis/powershelf/PowerSubsystem/PowerSupplies/Bay${i}`,
      status: { state, ...(state === 'Absent' ? {} : { health: 'OK' }) },
    });
    const shelf: HardwareInventory = {
      ...computeInventory(),
      nodeType: 'powershelf_gb200_liteon',
      kind: 'power_shelf',
      cpus: [],
      gpus: [],
      memory: [],
      nvlinkPorts: [],
      powerSupplies: [1, 2, 3, 4, 5, 6].map((i) => psu(i, i === 3 ? 'Absent' : 'Enabled')),
    };
    const profile = hardwareProfile('powershelf_gb200_liteon')!;
    assert.deepEqual(codes(checkProfile(shelf, profile)), ['part_missing Bay3']);
    // Like DMTF's power-shelf mockup: five bays listed, one filled.
    shelf.powerSupplies = [1, 3, 4, 5, 6].map((i) => psu(i, i === 1 ? 'Enabled' : 'Absent'));
    assert.deepEqual(codes(checkProfile(shelf, profile)), [
      'part_missing Bay3',
      'part_missing Bay4',
      'part_missing Bay5',
      'part_missing Bay6',
      'part_count PSU_*',
    ]);
  });

  it('pinned serials: a replaced part and a tray that is not the one NetBox holds are named', () => {
    const baseline = computeInventory();
    const profile = hardwareProfile('compute_gb200_nvidia', {
      serials: { ...serialsOf(baseline), tray: 'NB-SERIAL' },
    })!;
    const now = computeInventory();
    now.gpus[2]!.serialNumber = 'G2-NEW';
    const d = checkProfile(now, profile);
    assert.deepEqual(codes(d), ['serial_number tray', 'serial_number GPU_2']);
    assert.match(d[0]!.message, /ct1 serial number is TRAY1, expected NB-SERIAL/);
    assert.deepEqual([d[1]!.expected, d[1]!.actual], ['G2', 'G2-NEW']);
    assert.deepEqual(checkProfile(now, hardwareProfile('compute_gb200_nvidia')!), [], 'unpinned: any serial');
  });

  it('a GB300 GPU in a GB200 tray and a part number of the wrong shape are named', () => {
    const inv = computeInventory();
    inv.gpus[1]!.model = 'NVIDIA GB300';
    inv.identity.partNumber = 'P4975';
    assert.deepEqual(codes(checkProfile(inv, gb200())), ['part_number tray', 'model GPU_1']);
  });

  it('an unhealthy NVLink port, a memory fault and a GPU short of links are named where they are', () => {
    const inv = computeInventory();
    inv.nvlinkPorts[5] = { ...inv.nvlinkPorts[5]!, health: 'Critical', linkStatus: 'LinkDown' };
    inv.nvlinkPorts = inv.nvlinkPorts.filter((p) => !(p.part === 'GPU_3' && p.port === 'NVLink_17'));
    inv.memory[1]!.status = { health: 'Warning' };
    assert.deepEqual(codes(checkProfile(inv, gb200())), [
      'nvlink_ports GPU_3',
      'nvlink_health GPU_0/NVLink_5',
      'health GPU_1_DRAM_0',
    ]);
  });

  it('links that are down because the host is off are not a difference', () => {
    const inv = computeInventory();
    inv.nvlinkPorts = inv.nvlinkPorts.map((p) => ({ ...p, linkStatus: 'LinkDown' }));
    assert.deepEqual(checkProfile(inv, gb200()), []);
  });

  it('firmware floors: below the floor and absent components are named', () => {
    const profile = hardwareProfile('compute_gb200_nvidia', {
      minimumFirmware: [
        { component: '^FW_BMC_0$', version: 'GB200Nvl-25.09-1' },
        { component: '^HGX_FW_GPU_\\d+$', version: '97.00.A0.00.01' },
        { component: '^UEFI$', version: '02.04.07' },
      ],
    })!;
    const d = checkProfile(computeInventory(), profile);
    assert.deepEqual(codes(d), ['firmware_below_minimum FW_BMC_0', 'firmware_missing ^UEFI$']);
    assert.match(d[0]!.message, /FW_BMC_0 runs GB200Nvl-25.06-4, below the minimum GB200Nvl-25.09-1/);
  });

  it('a profile for another node type says so', () => {
    const d = checkProfile(computeInventory(), hardwareProfile('compute_gb300_nvidia')!);
    assert.deepEqual(codes(d), ['node_type ct1', 'model GPU_0', 'model GPU_1', 'model GPU_2', 'model GPU_3']);
  });

  it('orders firmware versions naturally', () => {
    const lt = (a: string, b: string) => assert.equal(compareFirmwareVersions(a, b), -1, `${a} < ${b}`);
    lt('25.9', '25.10');
    lt('GB200Nvl-25.06-4', 'GB200Nvl-25.09-2');
    lt('0.1A', '0.1C');
    lt('1.2', '1.2.1');
    lt('01.04.0008.0000_n04', '01.04.0010.0000_n04');
    assert.equal(compareFirmwareVersions('02.04.07', '2.4.7'), 0);
    assert.equal(compareFirmwareVersions('2.10', '2.9'), 1);
  });
});

describe('rack MNNVLink topology', () => {
  it('a full NVL72 rack is complete: 1,296 links, each named back, none shared', () => {
    const r = checkRackTopology(fullRack());
    assert.deepEqual(r.issues, []);
    assert.equal(r.complete, true);
    assert.deepEqual([r.rack, r.computeTrays, r.switchTrays, r.links, r.expectedLinks], [RACK, 18, 9, 1296, 1296]);
  });

  it('an absent switch tray is named by its slot, with the 144 GPU links that end there', () => {
    const r = checkRackTopology(fullRack().filter((t) => t.deviceId !== 'sw4'));
    assert.equal(r.complete, false);
    assert.deepEqual(
      r.issues.map((i) => `${i.code} ${i.subject}`),
      ['tray_missing slot 14'],
    );
    const missing = r.issues[0]!;
    assert.equal(missing.links!.length, 18 * 4 * 2);
    assert.ok(missing.links!.includes('ct1 GPU_0/NVLink_6 → Slot_14/NVSwitch_0/NVLink_0'));
    assert.match(missing.message, /no switch tray of rack RACK0001 reports slot 14: 144 links end there/);
    assert.equal(r.links, 1296 - 144);
  });

  it('an absent compute tray is named by its slot with its 72 links', () => {
    const r = checkRackTopology(fullRack().filter((t) => t.deviceId !== 'ct12'));
    assert.deepEqual(
      r.issues.map((i) => `${i.code} ${i.subject} ${i.links?.length}`),
      ['tray_missing slot 21 72'],
    );
    assert.equal(r.issues[0]!.links![0], 'sw1 NVSwitch_0/NVLink_44 → Slot_21/GPU_0/NVLink_0');
  });

  it('two crossed cables: each end that is not named back, and the port named twice', () => {
    const trays = fullRack();
    const ct = trays[0]!;
    // GPU_0 link 0 now claims the switch port of GPU_1 link 0.
    ct.nvlinkPorts[0] = { ...ct.nvlinkPorts[0]!, remotePortId: ct.nvlinkPorts[18]!.remotePortId! };
    const r = checkRackTopology(trays);
    assert.equal(r.complete, false);
    assert.deepEqual(r.issues.map((i) => `${i.code} ${i.subject}`).sort(), [
      'link_not_returned ct1 GPU_0/NVLink_0',
      'link_not_returned sw1 NVSwitch_0/NVLink_0',
      'port_shared Slot_11/NVSwitch_0/NVLink_1',
    ]);
  });

  it('a tray of another rack, two trays in one slot, a tray with no position and short counts are named', () => {
    const trays = fullRack();
    trays.push({ ...computeTray(0), deviceId: 'intruder' });
    trays.push({
      ...switchTray(0),
      deviceId: 'elsewhere',
      location: { chassisSerialNumber: 'RACK0002', slotNumber: 11 },
    });
    trays.push({ ...switchTray(1), deviceId: 'lost', location: undefined });
    const short = trays[5]!;
    short.nvlinkPorts = short.nvlinkPorts.filter((p) => p.part !== 'GPU_3' && p.port !== 'NVLink_17');
    const r = checkRackTopology(trays);
    const named = r.issues.map((i) => `${i.code} ${i.subject}`);
    for (const expected of [
      'tray_unplaced lost',
      'other_rack elsewhere',
      'slot_taken intruder',
      'part_count ct6',
      'port_count ct6 GPU_0',
    ])
      assert.ok(named.includes(expected), `${expected} in ${named.join('; ')}`);
    // The switch ports that the missing GPU_3 links should answer are not named back.
    assert.ok(named.some((n) => n.startsWith('port_missing sw')));
  });

  it('links that are down are listed but the cabling is complete', () => {
    const trays = fullRack();
    trays[0]!.nvlinkPorts = trays[0]!.nvlinkPorts.map((p) => ({ ...p, linkStatus: 'LinkDown' }));
    const r = checkRackTopology(trays);
    assert.equal(r.complete, true);
    assert.equal(r.linksDown.length, 72);
  });

  it('no trays at all is not complete', () => {
    const r = checkRackTopology([]);
    assert.equal(r.complete, false);
    assert.deepEqual(
      r.issues.map((i) => i.code),
      ['no_trays'],
    );
  });
});

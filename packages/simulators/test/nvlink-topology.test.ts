import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nvl72, nvlinksPerGpu, portsPerNvswitch } from '../src/redfish/rack.js';
import { admin, rf, startSim, type TestSim } from './helpers.js';

/** The far end a Port names in RemotePortId: `<rack>/Slot_<nn>/<part>/<port>`. */
interface End {
  rack: string;
  slot: number;
  part: string;
  port: string;
}
const parse = (id: string): End => {
  const m = /^([^/]+)\/Slot_(\d{2})\/((?:GPU|NVSwitch)_\d+)\/(NVLink_\d+)$/.exec(id);
  assert.ok(m, `RemotePortId ${id}`);
  return { rack: m[1]!, slot: Number(m[2]), part: m[3]!, port: m[4]! };
};
const key = (e: End) => `${e.rack}/${e.slot}/${e.part}/${e.port}`;

interface Link {
  local: End;
  remote: End;
  linkStatus: string;
  health: string;
}

const pad = (n: number) => String(n).padStart(2, '0');
const computeIds = (rack: string, n: number) => Array.from({ length: n }, (_, i) => `${rack}-ct${pad(i + 1)}`);
const switchIds = (rack: string, n: number) => Array.from({ length: n }, (_, i) => `${rack}-nvsw${pad(i + 1)}`);

describe('MNNVLink topology across a rack', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([
      ...computeIds('r1', nvl72.computeTrays).map((id) => ({ id, rack: 'r1', powerState: 'On' as const })),
      ...switchIds('r1', nvl72.switchTrays).map((id) => ({
        id,
        rack: 'r1',
        profile: 'nvswitch-tray' as const,
        powerState: 'On' as const,
      })),
      // A second rack's trays: same slots, another rack serial, no links into rack r1.
      { id: 'r2-ct01', rack: 'r2', powerState: 'On' },
      { id: 'r2-nvsw01', rack: 'r2', profile: 'nvswitch-tray', powerState: 'On' },
    ]);
  });
  after(() => t.close());

  const get = async (id: string, path: string) => {
    const res = await rf(t.url(id), 'GET', path);
    assert.equal(res.status, 200, `${id} ${path}`);
    return res.body;
  };
  const members = async (id: string, path: string): Promise<string[]> =>
    (await get(id, path)).Members.map((m: { '@odata.id': string }) => m['@odata.id']);

  /** Every GPU link of a compute tray, read over Redfish as a client would: Systems → Processors → Ports. */
  async function computeLinks(id: string): Promise<Link[]> {
    const links: Link[] = [];
    for (const gpuPath of await members(id, '/redfish/v1/Systems/HGX_Baseboard_0/Processors')) {
      const gpu = await get(id, gpuPath);
      const where = gpu.Oem.Nvidia.MNNVLinkTopology;
      const ports = await members(id, gpu.Ports['@odata.id']);
      assert.equal(ports.length, nvlinksPerGpu);
      for (const p of ports) {
        const port = await get(id, p);
        assert.equal(port.PortProtocol, 'NVLink');
        links.push({
          local: { rack: where.ChassisSerialNumber, slot: where.TraySlotNumber, part: gpu.Id, port: port.Id },
          remote: parse(port.RemotePortId),
          linkStatus: port.LinkStatus,
          health: port.Status.Health,
        });
      }
    }
    return links;
  }

  /** Every NVSwitch port of a switch tray: Fabrics → Switches → Ports. */
  async function switchLinks(id: string): Promise<Link[]> {
    const links: Link[] = [];
    for (const fabric of await members(id, '/redfish/v1/Fabrics')) {
      for (const switchPath of await members(id, (await get(id, fabric)).Switches['@odata.id'])) {
        const sw = await get(id, switchPath);
        assert.equal(sw.SwitchType, 'NVLink');
        const where = sw.Oem.Nvidia.MNNVLinkTopology;
        const ports = await members(id, sw.Ports['@odata.id']);
        assert.equal(ports.length, portsPerNvswitch);
        for (const p of ports) {
          const port = await get(id, p);
          links.push({
            local: { rack: where.ChassisSerialNumber, slot: where.TraySlotNumber, part: sw.Id, port: port.Id },
            remote: parse(port.RemotePortId),
            linkStatus: port.LinkStatus,
            health: port.Status.Health,
          });
        }
      }
    }
    return links;
  }

  const readRack = async (rack: string) => ({
    compute: (await Promise.all(computeIds(rack, nvl72.computeTrays).map(computeLinks))).flat(),
    switches: (await Promise.all(switchIds(rack, nvl72.switchTrays).map(switchLinks))).flat(),
  });

  it('every GPU link ends on a switch port that exists and names it back; no switch port is used twice', async () => {
    const { compute, switches } = await readRack('r1');
    assert.equal(compute.length, nvl72.computeTrays * nvl72.gpusPerComputeTray * nvlinksPerGpu);
    assert.equal(switches.length, nvl72.switchTrays * nvl72.nvswitchesPerSwitchTray * portsPerNvswitch);

    const switchPorts = new Map(switches.map((l) => [key(l.local), l]));
    assert.equal(switchPorts.size, switches.length, 'switch ports are distinct');
    const used = new Set<string>();
    const racks = new Set<string>();
    for (const link of compute) {
      const far = switchPorts.get(key(link.remote));
      assert.ok(far, `${key(link.local)} → ${key(link.remote)} is a switch port of the rack`);
      assert.equal(key(far.remote), key(link.local), `${key(link.remote)} names ${key(link.local)} back`);
      assert.ok(!used.has(key(link.remote)), `${key(link.remote)} is used once`);
      used.add(key(link.remote));
      racks.add(link.local.rack);
      assert.equal(link.remote.rack, link.local.rack);
      assert.deepEqual([link.linkStatus, far.linkStatus], ['LinkUp', 'LinkUp']);
    }
    assert.equal(used.size, switches.length, 'every switch port is cabled to a GPU');
    assert.equal(racks.size, 1);

    // Every GPU reaches every NVSwitch chip of the rack once.
    const chipsPerGpu = new Map<string, Set<string>>();
    for (const l of compute) {
      const gpu = `${l.local.slot}/${l.local.part}`;
      chipsPerGpu.set(gpu, (chipsPerGpu.get(gpu) ?? new Set()).add(`${l.remote.slot}/${l.remote.part}`));
    }
    for (const chips of chipsPerGpu.values()) assert.equal(chips.size, nvl72.switchTrays * 2);
    // Slots: compute trays in 1-10 and 20-27, switch trays in 11-19.
    const computeSlots = new Set(compute.map((l) => l.local.slot));
    const switchSlots = new Set(switches.map((l) => l.local.slot));
    assert.deepEqual(
      [...switchSlots].sort((a, b) => a - b),
      [11, 12, 13, 14, 15, 16, 17, 18, 19],
    );
    assert.equal(computeSlots.size, 18);
    for (const s of computeSlots) assert.ok(!switchSlots.has(s));
  });

  it('another rack has its own serial and links only within itself', async () => {
    const other = (await computeLinks('r2-ct01'))[0]!;
    const mine = (await computeLinks('r1-ct01'))[0]!;
    assert.notEqual(other.local.rack, mine.local.rack);
    assert.equal(other.remote.rack, other.local.rack);
    const sw = await switchLinks('r2-nvsw01');
    // Only r2-ct01's GPUs are simulated in rack r2: their ports are up, the rest down.
    const up = sw.filter((l) => l.linkStatus === 'LinkUp');
    assert.equal(up.length, nvl72.nvswitchesPerSwitchTray * nvl72.gpusPerComputeTray);
    assert.ok(up.every((l) => l.remote.slot === other.local.slot));
  });

  it('a link fault on one GPU port shows at both of its ends and nowhere else', async () => {
    const res = await admin(t, 'POST', '/bmcs/r1-ct07/health/faults', { part: 'nvlink', gpu: 1, port: 4 });
    assert.equal(res.status, 200);
    try {
      const { compute, switches } = await readRack('r1');
      const down = compute.filter((l) => l.linkStatus !== 'LinkUp');
      assert.equal(down.length, 1);
      assert.equal(down[0]!.local.part, 'GPU_1');
      assert.equal(down[0]!.local.port, 'NVLink_4');
      assert.equal(down[0]!.health, 'Critical');
      const farDown = switches.filter((l) => l.linkStatus !== 'LinkUp');
      assert.deepEqual(
        farDown.map((l) => key(l.local)),
        [key(down[0]!.remote)],
      );
      assert.equal(farDown[0]!.health, 'Critical');
    } finally {
      await admin(t, 'DELETE', '/bmcs/r1-ct07/health/faults');
    }
  });

  it('a powered-off compute tray takes its links down on the switch side too', async () => {
    await rf(t.url('r1-ct18'), 'POST', '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset', {
      body: { ResetType: 'ForceOff' },
    });
    const sw = await switchLinks('r1-nvsw01');
    const down = sw.filter((l) => l.linkStatus === 'LinkDown');
    assert.equal(down.length, nvl72.nvswitchesPerSwitchTray * nvl72.gpusPerComputeTray);
    const slot18 = (await computeLinks('r1-ct18'))[0]!.local.slot;
    assert.ok(down.every((l) => l.remote.slot === slot18));
    assert.ok(
      down.every((l) => l.health === 'OK'),
      'a tray that is off is not a fault',
    );
  });
});

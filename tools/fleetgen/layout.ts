import { familyTable, nodeTypeFor, type NodeKind, type NodeType, type RackType } from '@fleet/domain';

/**
 * Pure layout of NVL72 sites as real racks are built: in a 48U rack, four power
 * shelves on top, ten compute trays, nine NVLink switch trays, eight compute trays,
 * and four power shelves at the bottom; every tray 1U, front-mounted.
 */
export interface FleetSpec {
  sites: number;
  racksPerSite: number;
  /** Rack families assigned round-robin. */
  rackTypes: RackType[];
  /** First BMC address; every device takes the next one (127.x.y.z for simulated sites). */
  firstAddress: string;
  sitePrefix?: string;
}

export type DeviceKind = 'compute' | 'switch' | 'powershelf';

export interface PlannedDevice {
  name: string;
  site: string;
  rack: string;
  kind: DeviceKind;
  family: 'gb200' | 'gb300';
  vendor: 'nvidia' | 'liteon' | 'delta';
  nodeType: NodeType;
  position: number;
  serial: string;
  mac: string;
  ip: string;
}

export interface Fleet {
  sites: { slug: string; name: string }[];
  racks: { site: string; name: string; type: RackType }[];
  devices: PlannedDevice[];
}

const slots: { kind: DeviceKind; position: number; index: number }[] = [
  ...[48, 47, 46, 45].map((position, i) => ({ kind: 'powershelf' as const, position, index: i + 1 })),
  ...Array.from({ length: 10 }, (_, i) => ({ kind: 'compute' as const, position: 43 - i, index: i + 1 })),
  ...Array.from({ length: 9 }, (_, i) => ({ kind: 'switch' as const, position: 32 - i, index: i + 1 })),
  ...Array.from({ length: 8 }, (_, i) => ({ kind: 'compute' as const, position: 22 - i, index: i + 11 })),
  ...[4, 3, 2, 1].map((position, i) => ({ kind: 'powershelf' as const, position, index: i + 5 })),
];
export const devicesPerRack = slots.length;
/** The NetBox device role of each kind, as fleetgen writes it and the NetBox agent reads it. */
export const netboxRoleOf = {
  compute: 'compute-tray',
  switch: 'nvlink-switch-tray',
  powershelf: 'power-shelf',
} as const satisfies Record<DeviceKind, string>;
const kindOf: Record<DeviceKind, NodeKind> = { compute: 'compute', switch: 'switch', powershelf: 'power_shelf' };

function addressAt(first: string, offset: number): string {
  const n =
    first
      .split('.')
      .map(Number)
      .reduce((acc, o) => acc * 256 + o, 0) + offset;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

export function planFleet(spec: FleetSpec): Fleet {
  const fleet: Fleet = { sites: [], racks: [], devices: [] };
  let n = 0;
  for (let s = 1; s <= spec.sites; s++) {
    const site = `${spec.sitePrefix ?? 'site'}-${String(s).padStart(2, '0')}`;
    fleet.sites.push({ slug: site, name: `NVL72 ${site}` });
    for (let r = 1; r <= spec.racksPerSite; r++) {
      const type = spec.rackTypes[(r - 1) % spec.rackTypes.length]!;
      const family = type === 'gb300_nvl72' ? 'gb300' : 'gb200';
      if (familyTable[family].rackType !== type) throw new Error(`fleetgen builds gb200 and gb300 racks, not ${type}`);
      const rack = `r${String(r).padStart(3, '0')}`;
      fleet.racks.push({ site, name: rack, type });
      for (const slot of slots) {
        // Power shelves alternate between the two qualified vendors, as sites mix them.
        const vendor = slot.kind === 'powershelf' ? (slot.index % 2 ? 'liteon' : 'delta') : 'nvidia';
        const nodeType = nodeTypeFor({ role: kindOf[slot.kind], vendor, productFamily: family })!;
        const tag = slot.kind === 'powershelf' ? 'ps' : slot.kind === 'switch' ? 'nvsw' : 'ct';
        fleet.devices.push({
          name: `${site}-${rack}-${tag}${String(slot.index).padStart(2, '0')}`,
          site,
          rack,
          kind: slot.kind,
          family,
          vendor,
          nodeType,
          position: slot.position,
          serial: `${tag.toUpperCase()}${family.toUpperCase()}${String(n).padStart(7, '0')}`,
          mac:
            '02:fe:' +
            [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
              .map((b) => b.toString(16).padStart(2, '0'))
              .join(':'),
          ip: addressAt(spec.firstAddress, n),
        });
        n++;
      }
    }
  }
  return fleet;
}

/** The simulator profile that plays each node type. */
export function simulatorProfile(d: PlannedDevice): string {
  if (d.kind === 'compute') return `${d.family}-compute`;
  if (d.kind === 'switch') return 'nvswitch-tray';
  return `powershelf-${d.vendor}`;
}

/**
 * Simulated NVOS switches for a fleet's switch trays (the simulator config's `switches`): NVOS
 * answers on the tray's BMC address, NVUE and SSH on ports of their own, with the BMC's login.
 */
export function simulatedSwitches(fleet: Fleet, o: { nvuePort: number; sshPort: number; password: string }) {
  return fleet.devices
    .filter((d) => d.kind === 'switch')
    .map((d) => ({
      id: d.name,
      address: d.ip,
      nvuePort: o.nvuePort,
      sshPort: o.sshPort,
      username: 'admin',
      password: o.password,
      nvosVersion: '25.02.4282',
      imageShape: d.family === 'gb300' ? 'object' : 'string',
    }));
}

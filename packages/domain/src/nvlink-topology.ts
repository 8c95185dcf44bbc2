/**
 * Whether the MNNVLink topology of a rack is complete, from the hardware inventories of its compute and switch trays
 * (docs/hardware-inventory.md). Every port names its far end in `RemotePortId` as `<rack chassis serial>/Slot_<nn>/
 * <GPU_n|NVSwitch_n>/NVLink_<n>`; the far end is on another BMC, so only the trays' inventories together can say
 * whether the cabling closes. Dependency-free (no zod) so workflow code may use it.
 */
import {
  familyTable,
  hardwareTable,
  isNodeType,
  nvl72Layout,
  nvlinksPerGpu,
  portsPerNvswitch,
  type ProductFamily,
  type RackLayout,
} from './hardware.js';
import type { HardwareInventory, NvlinkPort } from './hardware-inventory.js';

/** What the check needs of a tray's inventory. */
export type TopologyTray = Pick<HardwareInventory, 'deviceId' | 'nodeType' | 'kind' | 'location' | 'nvlinkPorts'>;

export type TopologyIssueCode =
  | 'no_trays'
  | 'mixed_families'
  | 'tray_unplaced'
  | 'other_rack'
  | 'slot_taken'
  | 'tray_missing'
  | 'tray_count'
  | 'part_count'
  | 'port_count'
  | 'link_unnamed'
  | 'link_unparsable'
  | 'link_leaves_rack'
  | 'link_wrong_end'
  | 'port_missing'
  | 'link_not_returned'
  | 'port_shared';

export interface TopologyIssue {
  code: TopologyIssueCode;
  /** The tray, part, port or slot the issue is about. */
  subject: string;
  message: string;
  /** The links concerned, `<device> <part>/<port> → <far end>`, where there are several (a missing tray's). */
  links?: string[];
}

export interface RackTopologyReport {
  /** Every GPU port links to an existing switch port that names it back, none shared, with the layout's counts. */
  complete: boolean;
  /** The rack's chassis serial number, as most trays report it. */
  rack?: string;
  computeTrays: number;
  switchTrays: number;
  /** GPU links whose far end exists and names them back. */
  links: number;
  expectedLinks: number;
  issues: TopologyIssue[];
  /** Ports whose link is down although cabled (a host off, a Critical fault): not a topology issue. */
  linksDown: string[];
}

type RackKind = 'compute' | 'switch';
interface PlacedTray extends TopologyTray {
  kind: RackKind;
  slot: number;
}
interface PortAt {
  tray: PlacedTray;
  port: NvlinkPort;
}

/** The RemotePortId a port has as the far end of another. */
export function remotePortIdOf(rack: string, slot: number, part: string, port: string): string {
  return `${rack}/Slot_${String(slot).padStart(2, '0')}/${part}/${port}`;
}

function parseRemotePortId(id: string): { rack: string; slot: number; part: string; port: string } | undefined {
  const m = /^(.+)\/Slot_(\d+)\/([^/]+)\/([^/]+)$/.exec(id);
  return m ? { rack: m[1]!, slot: Number(m[2]), part: m[3]!, port: m[4]! } : undefined;
}

const other = (k: RackKind): RackKind => (k === 'compute' ? 'switch' : 'compute');
const shortName = (id: string) => id.slice(id.indexOf('/') + 1);

/**
 * Checks the rack the trays report (the chassis serial most of them share): every GPU port names a switch port that
 * exists in that rack and names the GPU port back, every switch port likewise, no port is named twice, and the counts
 * are the layout's (18 compute trays of 4 GPUs with 18 links each, 9 switch trays of 2 chips with 72 ports each on
 * NVL72). Each difference is named; a tray that no inventory came from is named by its slot and the links that end
 * there. `layout` defaults to the trays' family's.
 */
export function checkRackTopology(trays: readonly TopologyTray[], layout?: RackLayout): RackTopologyReport {
  const issues: TopologyIssue[] = [];
  const shape = layout ?? layoutOf(trays, issues);
  const expectedLinks = shape.computeTrays * shape.gpusPerComputeTray * nvlinksPerGpu(shape);
  const { rack, placed } = placeTrays(trays, issues);
  const linksDown: string[] = [];
  const report = (links: number): RackTopologyReport => {
    const count = (k: RackKind) => placed.filter((t) => t.kind === k).length;
    return {
      complete: issues.length === 0 && links === expectedLinks,
      ...(rack !== undefined ? { rack } : {}),
      computeTrays: count('compute'),
      switchTrays: count('switch'),
      links,
      expectedLinks,
      issues,
      linksDown,
    };
  };
  if (rack === undefined) {
    if (trays.length === 0) issues.push({ code: 'no_trays', subject: 'rack', message: 'no compute or switch trays' });
    return report(0);
  }

  const ports = new Map<string, PortAt>();
  for (const tray of placed)
    for (const port of tray.nvlinkPorts)
      ports.set(remotePortIdOf(rack, tray.slot, port.part, port.port), { tray, port });
  issues.push(...checkCounts(placed, shape));

  const bySlot = new Map(placed.map((t) => [t.slot, t]));
  const namedBy = new Map<string, string[]>();
  const missing = new Map<number, { kind: RackKind; links: string[] }>();
  let links = 0;
  for (const [key, { tray, port }] of ports) {
    const here = `${tray.deviceId} ${port.part}/${port.port}`;
    if (port.linkStatus !== undefined && port.linkStatus !== 'LinkUp') linksDown.push(here);
    const issue = (code: TopologyIssueCode, message: string) => issues.push({ code, subject: here, message });
    if (!port.remotePortId) {
      issue('link_unnamed', `${here} names no far end (RemotePortId)`);
      continue;
    }
    const far = parseRemotePortId(port.remotePortId);
    if (!far) {
      issue('link_unparsable', `${here} names its far end as ${JSON.stringify(port.remotePortId)}`);
      continue;
    }
    if (far.rack !== rack) {
      issue('link_leaves_rack', `${here} links to ${port.remotePortId}, outside rack ${rack}`);
      continue;
    }
    namedBy.set(port.remotePortId, [...(namedBy.get(port.remotePortId) ?? []), here]);
    const farKind = other(tray.kind);
    const end = ports.get(port.remotePortId);
    const farTray = bySlot.get(far.slot);
    if (!farTray) {
      const m = missing.get(far.slot) ?? { kind: farKind, links: [] };
      m.links.push(`${here} → ${shortName(port.remotePortId)}`);
      missing.set(far.slot, m);
    } else if (farTray.kind !== farKind) {
      issue(
        'link_wrong_end',
        `${here} links to ${shortName(port.remotePortId)}, on ${farTray.kind} tray ${farTray.deviceId}`,
      );
    } else if (!end) {
      issue('port_missing', `${here} links to ${far.part}/${far.port} of ${farTray.deviceId}, which has no such port`);
    } else if (end.port.remotePortId !== key) {
      const back = end.port.remotePortId ? shortName(end.port.remotePortId) : 'nothing';
      issue('link_not_returned', `${here} links to ${farTray.deviceId} ${far.part}/${far.port}, which names ${back}`);
    } else if (tray.kind === 'compute') {
      links++;
    }
  }
  for (const [far, names] of namedBy)
    if (names.length > 1)
      issues.push({
        code: 'port_shared',
        subject: shortName(far),
        message: `${shortName(far)} is named by ${names.length} ports: ${names.join(', ')}`,
        links: names,
      });
  for (const [slot, m] of missing)
    issues.push({
      code: 'tray_missing',
      subject: `slot ${slot}`,
      message:
        `no ${m.kind} tray of rack ${rack} reports slot ${slot}: ${m.links.length} links end there ` +
        `(${m.links.slice(0, 2).join(', ')}${m.links.length > 2 ? ', …' : ''})`,
      links: m.links,
    });
  issues.push(...unnamedMissingTrays(placed, missing, shape));
  return report(links);
}

/** The layout of the trays' family; NVL72 when none is known. Trays of several families cannot share a fabric. */
function layoutOf(trays: readonly TopologyTray[], issues: TopologyIssue[]): RackLayout {
  const families = new Set<ProductFamily>();
  for (const t of trays) if (isNodeType(t.nodeType)) families.add(hardwareTable[t.nodeType].family);
  if (families.size > 1)
    issues.push({
      code: 'mixed_families',
      subject: 'rack',
      message: `the trays are of several families (${[...families].join(', ')}); one NVLink domain has one`,
    });
  const [first] = families;
  return first ? familyTable[first].layout : nvl72Layout;
}

/** The compute and switch trays of the rack most of them report, each in its own slot. */
function placeTrays(
  trays: readonly TopologyTray[],
  issues: TopologyIssue[],
): { rack: string | undefined; placed: PlacedTray[] } {
  const candidates: PlacedTray[] = [];
  for (const t of trays) {
    if (t.kind !== 'compute' && t.kind !== 'switch') continue;
    const slot = t.location?.slotNumber;
    if (!t.location?.chassisSerialNumber || slot === undefined) {
      issues.push({
        code: 'tray_unplaced',
        subject: t.deviceId,
        message: `${t.deviceId} reports no rack position (Oem.Nvidia.MNNVLinkTopology)`,
      });
      continue;
    }
    candidates.push({ ...t, kind: t.kind, slot });
  }
  const votes = new Map<string, number>();
  for (const t of candidates)
    votes.set(t.location!.chassisSerialNumber!, (votes.get(t.location!.chassisSerialNumber!) ?? 0) + 1);
  const rack = [...votes].sort((a, b) => b[1] - a[1])[0]?.[0];
  const placed: PlacedTray[] = [];
  const bySlot = new Map<number, PlacedTray>();
  for (const t of candidates) {
    if (t.location!.chassisSerialNumber !== rack) {
      issues.push({
        code: 'other_rack',
        subject: t.deviceId,
        message: `${t.deviceId} reports rack ${t.location!.chassisSerialNumber}, the other trays ${rack}`,
      });
      continue;
    }
    const taken = bySlot.get(t.slot);
    if (taken) {
      issues.push({
        code: 'slot_taken',
        subject: t.deviceId,
        message: `${t.deviceId} and ${taken.deviceId} both report slot ${t.slot}`,
      });
      continue;
    }
    bySlot.set(t.slot, t);
    placed.push(t);
  }
  return { rack, placed };
}

/** GPUs per compute tray and links per GPU; chips per switch tray and ports per chip. */
function checkCounts(placed: PlacedTray[], shape: RackLayout): TopologyIssue[] {
  const issues: TopologyIssue[] = [];
  const expect = {
    compute: { parts: shape.gpusPerComputeTray, ports: nvlinksPerGpu(shape), label: 'GPUs' },
    switch: { parts: shape.nvswitchesPerSwitchTray, ports: portsPerNvswitch(shape), label: 'NVSwitch chips' },
  };
  for (const t of placed) {
    const e = expect[t.kind];
    const perPart = new Map<string, number>();
    for (const p of t.nvlinkPorts) perPart.set(p.part, (perPart.get(p.part) ?? 0) + 1);
    if (perPart.size !== e.parts)
      issues.push({
        code: 'part_count',
        subject: t.deviceId,
        message:
          `${t.deviceId} has NVLink ports on ${perPart.size} ${e.label} ` +
          `(${[...perPart.keys()].join(', ') || 'none'}), expected ${e.parts}`,
      });
    for (const [part, n] of perPart)
      if (n !== e.ports)
        issues.push({
          code: 'port_count',
          subject: `${t.deviceId} ${part}`,
          message: `${t.deviceId} ${part} has ${n} NVLink ports, expected ${e.ports}`,
        });
  }
  return issues;
}

/** Trays short of the layout's count that no link names (when whole parts of the fabric are gone). */
function unnamedMissingTrays(
  placed: PlacedTray[],
  missing: Map<number, { kind: RackKind }>,
  shape: RackLayout,
): TopologyIssue[] {
  const issues: TopologyIssue[] = [];
  for (const [kind, expected] of [
    ['compute', shape.computeTrays],
    ['switch', shape.switchTrays],
  ] as const) {
    const present = placed.filter((t) => t.kind === kind).length;
    const named = [...missing.values()].filter((m) => m.kind === kind).length;
    if (present + named !== expected)
      issues.push({
        code: 'tray_count',
        subject: `${kind} trays`,
        message:
          `${present} ${kind} trays report this rack` +
          `${named ? ` and links name ${named} more` : ''}, expected ${expected}`,
      });
  }
  return issues;
}

/**
 * Expected hardware profiles: what a healthy device of a node type reports over Redfish, derived from the hardware
 * table, and the check that names each way an inventory differs from it. Dependency-free (no zod) so workflow code
 * may use it. Patterns are regular-expression sources (matched in any case), so a profile is plain JSON.
 */
import type { ComponentVersion } from './firmware.js';
import {
  familyTable,
  hardwareTable,
  isNodeType,
  nvlinksPerGpu,
  portsPerNvswitch,
  vendorTable,
  type HardwareSpec,
  type NodeKind,
  type NodeType,
  type VendorSpec,
} from './hardware.js';
import {
  partsOf,
  traySerialKey,
  type HardwareInventory,
  type InventoryPart,
  type InventoryPartKind,
} from './hardware-inventory.js';

export interface PartsExpectation {
  count: number;
  model?: string;
  partNumber?: string;
}

/** Parts with NVLink ports: GPUs (to the switch trays) and NVSwitch chips (to the GPUs). */
export interface LinkedPartsExpectation extends PartsExpectation {
  nvlinkPorts: number;
}

/** Every firmware component whose id matches `component` runs `version` or later (compareFirmwareVersions). */
export interface FirmwareFloor {
  component: string;
  version: string;
}

export interface HardwareProfile {
  nodeType: NodeType;
  kind: NodeKind;
  /** The device's own part number. */
  partNumber?: string;
  cpus?: PartsExpectation;
  gpus?: LinkedPartsExpectation;
  nvswitches?: LinkedPartsExpectation;
  powerSupplies?: PartsExpectation;
  minimumFirmware: FirmwareFloor[];
  /**
   * Serial numbers the hardware must report, by part id, and `tray` for the device itself: NetBox's serial, or a
   * baseline read earlier (serialsOf), so a part replaced since is named.
   */
  serials: Record<string, string>;
}

/**
 * The profile of a node type, from its rows in the hardware table (counts from the family's rack layout, models from
 * the family, the part-number shape from the vendor); undefined for a name the table does not hold. The table has
 * no per-component firmware floors (RMS's HCL names whole bundles), so `minimumFirmware` and `serials` are the
 * caller's: a firmware manifest's floor, NetBox's serial, a recorded baseline.
 */
export function hardwareProfile(
  nodeType: string,
  extra: { minimumFirmware?: FirmwareFloor[]; serials?: Record<string, string> } = {},
): HardwareProfile | undefined {
  if (!isNodeType(nodeType)) return undefined;
  const row: HardwareSpec = hardwareTable[nodeType];
  const family = familyTable[row.family];
  const vendor: VendorSpec = vendorTable[row.vendor];
  const layout = family.layout;
  const base = {
    nodeType,
    kind: row.kind,
    ...(vendor.partNumberPattern ? { partNumber: vendor.partNumberPattern } : {}),
    minimumFirmware: extra.minimumFirmware ?? [],
    serials: extra.serials ?? {},
  };
  if (row.kind === 'compute')
    return {
      ...base,
      cpus: { count: layout.cpusPerComputeTray, model: family.cpuModel },
      gpus: { count: layout.gpusPerComputeTray, model: family.gpuModel, nvlinkPorts: nvlinksPerGpu(layout) },
    };
  if (row.kind === 'switch')
    return { ...base, nvswitches: { count: layout.nvswitchesPerSwitchTray, nvlinkPorts: portsPerNvswitch(layout) } };
  return { ...base, powerSupplies: { count: layout.psusPerPowerShelf } };
}

export type ProfileDifferenceCode =
  | 'node_type'
  | 'part_missing'
  | 'part_count'
  | 'model'
  | 'part_number'
  | 'serial_number'
  | 'health'
  | 'nvlink_ports'
  | 'nvlink_health'
  | 'firmware_missing'
  | 'firmware_below_minimum';

/** One way the hardware differs from its profile; `subject` names the part, port or component. */
export interface ProfileDifference {
  code: ProfileDifferenceCode;
  subject: string;
  expected?: string;
  actual?: string;
  message: string;
}

/** What each kind of part is called in messages, and the Redfish Id prefix NVIDIA gives it (GPU_0, NVSwitch_1). */
const partNames: Record<InventoryPartKind, { label: string; prefix: string }> = {
  cpu: { label: 'CPU', prefix: 'CPU' },
  gpu: { label: 'GPU', prefix: 'GPU' },
  memory: { label: 'memory device', prefix: 'Memory' },
  nvswitch: { label: 'NVSwitch chip', prefix: 'NVSwitch' },
  psu: { label: 'power supply', prefix: 'PSU' },
};

const listed = (parts: InventoryPart[]) => parts.map((p) => p.id).join(', ') || 'none';

const matches = (pattern: string, value: string | undefined) =>
  value !== undefined && new RegExp(pattern, 'i').test(value);

/**
 * Every way `inventory` differs from `profile`, each named: a missing or extra part, a model or part number that does
 * not match, a serial number other than the one pinned, a part or NVLink port whose own health is not OK, too few
 * NVLink ports, firmware missing or below its floor. An empty list means the hardware is what the profile expects.
 * Link state (up or down) is not judged: a tray whose host is off has its links down and is still the right hardware.
 */
export function checkProfile(inventory: HardwareInventory, profile: HardwareProfile): ProfileDifference[] {
  const out: ProfileDifference[] = [];
  if (inventory.nodeType !== profile.nodeType)
    out.push({
      code: 'node_type',
      subject: inventory.deviceId,
      expected: profile.nodeType,
      actual: inventory.nodeType,
      message: `${inventory.deviceId} is a ${inventory.nodeType}, the profile is for ${profile.nodeType}`,
    });
  if (profile.partNumber !== undefined) {
    const actual = inventory.identity.partNumber;
    if (!matches(profile.partNumber, actual))
      out.push(mismatch('part_number', traySerialKey, profile.partNumber, actual, 'part number'));
  }
  const groups: [InventoryPartKind, InventoryPart[], PartsExpectation | undefined][] = [
    ['cpu', inventory.cpus, profile.cpus],
    ['gpu', inventory.gpus, profile.gpus],
    ['nvswitch', inventory.nvswitches, profile.nvswitches],
    ['psu', inventory.powerSupplies, profile.powerSupplies],
  ];
  for (const [kind, parts, expected] of groups) if (expected) out.push(...checkParts(kind, parts, expected));
  if (profile.gpus) out.push(...checkPorts(inventory, inventory.gpus, profile.gpus.nvlinkPorts));
  if (profile.nvswitches) out.push(...checkPorts(inventory, inventory.nvswitches, profile.nvswitches.nvlinkPorts));
  out.push(...checkSerials(inventory, profile.serials));
  out.push(...checkHealth(inventory));
  out.push(...checkFirmware(inventory.firmware, profile.minimumFirmware));
  return out;
}

function mismatch(
  code: 'model' | 'part_number',
  subject: string,
  pattern: string,
  actual: string | undefined,
  what: string,
): ProfileDifference {
  return {
    code,
    subject,
    expected: pattern,
    ...(actual !== undefined ? { actual } : {}),
    message:
      actual === undefined
        ? `${subject} reports no ${what} (expected one matching /${pattern}/)`
        : `${subject} ${what} ${actual} does not match /${pattern}/`,
  };
}

/** A part whose slot the BMC reports empty (Redfish Status.State Absent: a bay without its PSU). */
const isAbsent = (p: InventoryPart) => p.status?.state === 'Absent';

function checkParts(kind: InventoryPartKind, parts: InventoryPart[], expected: PartsExpectation): ProfileDifference[] {
  const out: ProfileDifference[] = [];
  const { label, prefix } = partNames[kind];
  const present = parts.filter((p) => !isAbsent(p));
  const missing = (subject: string, why: string): ProfileDifference => ({
    code: 'part_missing',
    subject,
    message: `${subject} is missing: ${why}`,
  });
  const named = parts.filter(isAbsent).map((p) => missing(p.id, 'the BMC reports it absent'));
  if (present.length < expected.count) {
    // NVIDIA numbers parts from 0 (GPU_0…GPU_3): name the unlisted ones when the listed ones follow that scheme.
    const numbered = new RegExp(`^${prefix}_(\\d+)$`);
    const indices = parts.map((p) => numbered.exec(p.id)?.[1]);
    if (indices.every((i) => i !== undefined))
      for (let i = 0; i < expected.count; i++)
        if (!indices.includes(String(i)))
          named.push(
            missing(`${prefix}_${i}`, `the BMC lists ${present.length} ${label}s, expected ${expected.count}`),
          );
  }
  out.push(...named);
  if (present.length + named.length !== expected.count)
    out.push({
      code: 'part_count',
      subject: `${prefix}_*`,
      expected: String(expected.count),
      actual: String(present.length),
      message: `the BMC reports ${present.length} ${label}s (${listed(present)}), expected ${expected.count}`,
    });
  for (const p of present) {
    if (expected.model !== undefined && !matches(expected.model, p.model))
      out.push(mismatch('model', p.id, expected.model, p.model, 'model'));
    if (expected.partNumber !== undefined && !matches(expected.partNumber, p.partNumber))
      out.push(mismatch('part_number', p.id, expected.partNumber, p.partNumber, 'part number'));
  }
  return out;
}

function checkPorts(inventory: HardwareInventory, parts: InventoryPart[], perPart: number): ProfileDifference[] {
  const out: ProfileDifference[] = [];
  for (const p of parts) {
    const ports = inventory.nvlinkPorts.filter((l) => l.part === p.id);
    if (ports.length !== perPart)
      out.push({
        code: 'nvlink_ports',
        subject: p.id,
        expected: String(perPart),
        actual: String(ports.length),
        message: `${p.id} has ${ports.length} NVLink ports, expected ${perPart}`,
      });
  }
  for (const l of inventory.nvlinkPorts)
    if (l.health !== undefined && l.health !== 'OK')
      out.push({
        code: 'nvlink_health',
        subject: `${l.part}/${l.port}`,
        expected: 'OK',
        actual: l.health,
        message: `${l.part}/${l.port} health is ${l.health} (link ${l.linkStatus ?? 'state unknown'})`,
      });
  return out;
}

function checkSerials(inventory: HardwareInventory, serials: Record<string, string>): ProfileDifference[] {
  const out: ProfileDifference[] = [];
  const parts = new Map(partsOf(inventory).map((p) => [p.id, p]));
  for (const [id, expected] of Object.entries(serials)) {
    const isTray = id === traySerialKey;
    // A part that is not there at all is named by the count check.
    if (!isTray && !parts.has(id)) continue;
    const actual = isTray ? inventory.identity.serialNumber : parts.get(id)!.serialNumber;
    if (actual === expected) continue;
    const subject = isTray ? inventory.deviceId : id;
    out.push({
      code: 'serial_number',
      subject: isTray ? traySerialKey : id,
      expected,
      ...(actual !== undefined ? { actual } : {}),
      message:
        actual === undefined
          ? `${subject} reports no serial number, expected ${expected}`
          : `${subject} serial number is ${actual}, expected ${expected}` + (isTray ? '' : ' (the part was replaced?)'),
    });
  }
  return out;
}

/** A part's own health, not its rollup: a GPU whose link is faulty is named by that link, not as a faulty GPU. */
function checkHealth(inventory: HardwareInventory): ProfileDifference[] {
  return partsOf(inventory).flatMap((p) => {
    const health = isAbsent(p) ? undefined : p.status?.health;
    if (health === undefined || health === 'OK') return [];
    const why = p.status?.conditions?.length ? `: ${p.status.conditions.join('; ')}` : '';
    return [
      {
        code: 'health' as const,
        subject: p.id,
        expected: 'OK',
        actual: health,
        message: `${p.id} health is ${health}${why}`,
      },
    ];
  });
}

function checkFirmware(firmware: ComponentVersion[], floors: FirmwareFloor[]): ProfileDifference[] {
  const out: ProfileDifference[] = [];
  for (const floor of floors) {
    const found = firmware.filter((c) => matches(floor.component, c.id));
    if (found.length === 0)
      out.push({
        code: 'firmware_missing',
        subject: floor.component,
        expected: floor.version,
        message: `no firmware component matches /${floor.component}/ (expected ${floor.version} or later)`,
      });
    for (const c of found)
      if (compareFirmwareVersions(c.version, floor.version) < 0)
        out.push({
          code: 'firmware_below_minimum',
          subject: c.id,
          expected: floor.version,
          actual: c.version,
          message: `${c.id} runs ${c.version}, below the minimum ${floor.version}`,
        });
  }
  return out;
}

/**
 * Natural order of version strings: runs of digits compare as numbers, everything else as text (any case), so
 * 25.10 > 25.9, GB200Nvl-25.06-4 < GB200Nvl-25.09-2 and 0.1A < 0.1C. A version that extends another is the later.
 */
export function compareFirmwareVersions(a: string, b: string): number {
  const ta = a.match(/\d+|\D+/g) ?? [];
  const tb = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(ta.length, tb.length); i++) {
    const x = ta[i]!;
    const y = tb[i]!;
    const [p, q] = /^\d/.test(x) && /^\d/.test(y) ? [BigInt(x), BigInt(y)] : [x.toLowerCase(), y.toLowerCase()];
    if (p !== q) return p < q ? -1 : 1;
  }
  return Math.sign(ta.length - tb.length);
}

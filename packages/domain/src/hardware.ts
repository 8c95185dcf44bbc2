/**
 * The hardware table: every node type Fleet knows, and what follows from it. The one place hardware is described;
 * NodeType, roles, driver selection, the NetBox mapping, campaign scheduling and power-batch safety derive from it.
 * Dependency-free (no zod) so workflow code may use it. docs/reference/rms-behaviours.md#racks-and-node-types.
 */

/** What a device is in the rack: RMS's node role. */
export type NodeKind = 'compute' | 'switch' | 'power_shelf';
/** RMS calls the kind the node's role. */
export type NodeRole = NodeKind;
export type ProductFamily = 'gb200' | 'gb300' | 'vrnvl72';
export type RackType = 'gb200_nvl72' | 'gb300_nvl72' | 'vr_nvl72';

/**
 * How Fleet reaches the device: `redfish` (its BMC; a compute tray's BMC also fronts the HGX HMC) or `redfish+nvue`
 * (power through the tray's BMC, NVOS through NVUE REST and SSH).
 */
export type ManagementProfile = 'redfish' | 'redfish+nvue';
/**
 * How its firmware is applied: `redfish-update` (UpdateService, one package per component), `redfish-nvfwupd`
 * (UpdateService with the PMC's embedded nvfwupd flow) or `nvos-platform` (NVUE platform firmware and NVOS images).
 */
export type FirmwareProfile = 'redfish-update' | 'redfish-nvfwupd' | 'nvos-platform';
/**
 * What "off" means: `system` (ComputerSystem.Reset with RMS's mapping: off is a graceful shutdown) or
 * `shelf-output` (Chassis.Reset cuts or restores the shelf's DC output; graceful actions are refused).
 */
export type ResetSemantics = 'system' | 'shelf-output';
/** RMS's HCL status: `development` types are mapped and operable but not yet qualified. */
export type SupportStatus = 'supported' | 'development';

export interface KindSpec {
  label: string;
  /** The controllers its driver exposes for resets (a compute tray's HGX HMC besides its BMC). */
  managers: readonly ('bmc' | 'hmc')[];
  managementProfile: ManagementProfile;
  firmwareProfile: FirmwareProfile;
  reset: ResetSemantics;
  /** Words in a NetBox device role slug that name this kind (e.g. compute-tray, nvlink-switch-tray, power-shelf). */
  netboxRoleWords: readonly string[];
  /** Node type prefix in RMS's naming: <prefix>_<family>_<vendor>. */
  prefix: string;
}

export const kindTable = {
  compute: {
    label: 'Compute tray',
    managers: ['bmc', 'hmc'],
    managementProfile: 'redfish',
    firmwareProfile: 'redfish-update',
    reset: 'system',
    netboxRoleWords: ['compute'],
    prefix: 'compute',
  },
  switch: {
    label: 'NVLink switch tray',
    managers: ['bmc'],
    managementProfile: 'redfish+nvue',
    firmwareProfile: 'nvos-platform',
    reset: 'system',
    netboxRoleWords: ['switch', 'nvswitch'],
    prefix: 'switch',
  },
  power_shelf: {
    label: 'Power shelf',
    managers: ['bmc'],
    managementProfile: 'redfish',
    firmwareProfile: 'redfish-update',
    reset: 'shelf-output',
    netboxRoleWords: ['power', 'powershelf', 'shelf'],
    prefix: 'powershelf',
  },
} as const satisfies Record<NodeKind, KindSpec>;

/**
 * What a rack of the family holds and how its NVLink fabric is cabled: every GPU has one link to every NVSwitch chip
 * of the rack, so a GPU has switchTrays × nvswitchesPerSwitchTray links and a chip one port per GPU of the rack
 * (nvlinksPerGpu, portsPerNvswitch). Hardware profiles and the rack topology check count from it.
 */
export interface RackLayout {
  computeTrays: number;
  cpusPerComputeTray: number;
  gpusPerComputeTray: number;
  switchTrays: number;
  nvswitchesPerSwitchTray: number;
  psusPerPowerShelf: number;
}

/** NVL72: 18 compute trays of 2 CPUs and 4 GPUs, 9 switch trays of 2 NVSwitch chips, shelves of 6 PSUs. */
export const nvl72Layout = {
  computeTrays: 18,
  cpusPerComputeTray: 2,
  gpusPerComputeTray: 4,
  switchTrays: 9,
  nvswitchesPerSwitchTray: 2,
  psusPerPowerShelf: 6,
} as const satisfies RackLayout;

export const nvlinksPerGpu = (l: RackLayout): number => l.switchTrays * l.nvswitchesPerSwitchTray;
export const portsPerNvswitch = (l: RackLayout): number => l.computeTrays * l.gpusPerComputeTray;

export interface FamilySpec {
  generation: string;
  rackType: RackType;
  /** How NetBox device-type and rack-type slugs or models name the family, as dash-joined lower-case words. */
  netboxNames: readonly string[];
  layout: RackLayout;
  /** What the Redfish `Model` of the family's CPUs and GPUs contains (regular-expression source, any case). */
  cpuModel: string;
  gpuModel: string;
}

/** RMS's VR NVL72 rack wraps its GB200 rack with another profile: the same NVL72 layout. */
export const familyTable = {
  gb200: {
    generation: 'Blackwell',
    rackType: 'gb200_nvl72',
    netboxNames: ['gb200'],
    layout: nvl72Layout,
    cpuModel: 'Grace',
    gpuModel: 'GB200',
  },
  gb300: {
    generation: 'Blackwell Ultra',
    rackType: 'gb300_nvl72',
    netboxNames: ['gb300'],
    layout: nvl72Layout,
    cpuModel: 'Grace',
    gpuModel: 'GB300',
  },
  vrnvl72: {
    generation: 'Vera Rubin',
    rackType: 'vr_nvl72',
    netboxNames: ['vrnvl72', 'vr-nvl72', 'vera-rubin'],
    layout: nvl72Layout,
    cpuModel: 'Vera',
    gpuModel: 'Rubin|VR\\d',
  },
} as const satisfies Record<ProductFamily, FamilySpec>;

export interface VendorSpec {
  name: string;
  netboxSlugs: readonly string[];
  /**
   * The shape of the vendor's part numbers (regular-expression source), where it is known: NVIDIA's are
   * 3-5-4-3 characters (699-24975-0001-000, 920-9K36F-00MV-0D0).
   */
  partNumberPattern?: string;
}

/** Vendors by the slug Fleet uses, with the NetBox manufacturer slugs that mean them. */
export const vendorTable = {
  nvidia: {
    name: 'NVIDIA',
    netboxSlugs: ['nvidia'],
    partNumberPattern: '^\\d{3}-[0-9A-Z]{5}-[0-9A-Z]{4}-[0-9A-Z]{3}$',
  },
  liteon: { name: 'LITE-ON', netboxSlugs: ['liteon', 'lite-on'] },
  delta: { name: 'Delta Electronics', netboxSlugs: ['delta', 'delta-electronics'] },
  lenovo: { name: 'Lenovo', netboxSlugs: ['lenovo'] },
} as const satisfies Record<string, VendorSpec>;
export type Vendor = keyof typeof vendorTable;

export interface HardwareSpec {
  kind: NodeKind;
  vendor: Vendor;
  family: ProductFamily;
  /** RMS's proto NodeType number, where it has one. */
  rmsEnum: number | null;
  status: SupportStatus;
  /** Overrides of the kind's defaults for this node type. */
  firmwareProfile?: FirmwareProfile;
}

/** The node types, as in RMS's hardware compatibility list. Adding hardware is a row here (plus a driver if needed). */
export const hardwareTable = {
  compute_gb200_nvidia: { kind: 'compute', vendor: 'nvidia', family: 'gb200', rmsEnum: 1, status: 'supported' },
  compute_gb300_nvidia: { kind: 'compute', vendor: 'nvidia', family: 'gb300', rmsEnum: 5, status: 'supported' },
  compute_gb300_lenovo: { kind: 'compute', vendor: 'lenovo', family: 'gb300', rmsEnum: 9, status: 'development' },
  compute_vrnvl72_nvidia: { kind: 'compute', vendor: 'nvidia', family: 'vrnvl72', rmsEnum: 10, status: 'supported' },
  switch_gb200_nvidia: { kind: 'switch', vendor: 'nvidia', family: 'gb200', rmsEnum: 3, status: 'supported' },
  switch_gb300_nvidia: { kind: 'switch', vendor: 'nvidia', family: 'gb300', rmsEnum: 6, status: 'supported' },
  switch_vrnvl72_nvidia: { kind: 'switch', vendor: 'nvidia', family: 'vrnvl72', rmsEnum: null, status: 'supported' },
  powershelf_gb200_liteon: { kind: 'power_shelf', vendor: 'liteon', family: 'gb200', rmsEnum: 2, status: 'supported' },
  powershelf_gb200_delta: {
    kind: 'power_shelf',
    vendor: 'delta',
    family: 'gb200',
    rmsEnum: 4,
    status: 'supported',
    firmwareProfile: 'redfish-nvfwupd',
  },
  powershelf_gb300_liteon: { kind: 'power_shelf', vendor: 'liteon', family: 'gb300', rmsEnum: 7, status: 'supported' },
  powershelf_gb300_delta: {
    kind: 'power_shelf',
    vendor: 'delta',
    family: 'gb300',
    rmsEnum: 8,
    status: 'supported',
    firmwareProfile: 'redfish-nvfwupd',
  },
} as const satisfies Record<string, HardwareSpec>;

export type NodeType = keyof typeof hardwareTable;
export const nodeTypes = Object.keys(hardwareTable) as [NodeType, ...NodeType[]];
export const rackTypes = Object.values(familyTable).map((f) => f.rackType) as [RackType, ...RackType[]];

/** Everything the table says about a node type, with the kind's defaults filled in. */
export interface Hardware {
  nodeType: NodeType;
  kind: NodeKind;
  vendor: Vendor;
  family: ProductFamily;
  generation: string;
  rackType: RackType;
  managers: readonly ('bmc' | 'hmc')[];
  managementProfile: ManagementProfile;
  firmwareProfile: FirmwareProfile;
  reset: ResetSemantics;
  status: SupportStatus;
  rmsEnum: number | null;
}

export function isNodeType(value: string): value is NodeType {
  return Object.hasOwn(hardwareTable, value);
}

/** The hardware a node type names, or undefined for a name the table does not hold. */
export function hardwareOf(nodeType: string): Hardware | undefined {
  if (!isNodeType(nodeType)) return undefined;
  const row: HardwareSpec = hardwareTable[nodeType];
  const kind = kindTable[row.kind];
  const family = familyTable[row.family];
  return {
    nodeType,
    kind: row.kind,
    vendor: row.vendor,
    family: row.family,
    generation: family.generation,
    rackType: family.rackType,
    managers: kind.managers,
    managementProfile: kind.managementProfile,
    firmwareProfile: row.firmwareProfile ?? kind.firmwareProfile,
    reset: kind.reset,
    status: row.status,
    rmsEnum: row.rmsEnum,
  };
}

/** A node type's kind; null for a name the table does not hold. */
export function kindOfNodeType(nodeType: string | null | undefined): NodeKind | null {
  return nodeType && isNodeType(nodeType) ? hardwareTable[nodeType].kind : null;
}

/** The RMS node descriptor: what inventory says a device is. */
export interface NodeDescriptor {
  role: NodeRole;
  vendor: string;
  productFamily: ProductFamily;
}

/** The node type a descriptor names, or null when the table has none (an inventory issue). */
export function nodeTypeFor(d: NodeDescriptor): NodeType | null {
  const match = nodeTypes.find((t) => {
    const row = hardwareTable[t];
    return row.kind === d.role && row.vendor === d.vendor && row.family === d.productFamily;
  });
  return match ?? null;
}

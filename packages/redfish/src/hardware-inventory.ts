import type {
  HardwareInventory,
  InventoryIdentity,
  InventoryNic,
  InventoryPart,
  InventoryPartKind,
  InventoryStatus,
  InventorySummary,
  NvlinkPort,
  TrayLocation,
} from '@fleet/domain';
import { getPowerSubsystem } from './chassis.js';
import type { RedfishClient } from './client.js';
import { serviceRootUri } from './client.js';
import { compact } from './compact.js';
import { expandQuery, inlineBody, linkOf, memberUri, readCollection, rootLink, trimSlash } from './discovery.js';
import { RedfishError } from './errors.js';
import { getFirmwareInventory } from './firmware.js';
import { systemUri } from './systems.js';

/**
 * Where the device itself is: the host system of a tray (by Id on BMCs that list several), or a chassis (a power
 * shelf has no system).
 */
export type InventorySource = { system: string | undefined } | { chassis: string };

/** What the BMC says about its hardware, before the caller names the device it is. */
export type BmcInventory = Omit<HardwareInventory, 'deviceId' | 'nodeType' | 'kind'>;

export interface HardwareInventoryRead {
  inventory: BmcInventory;
  /** Every resource the read used, by URI, as the BMC sent it: the document the parsed fields came from. */
  resources: Record<string, unknown>;
}

export interface HardwareInventoryOptions {
  source: InventorySource;
  /** Called after every resource read, with how many have been read: a long read reports progress. */
  onProgress?: (resources: number) => void;
}

/**
 * The device's hardware as its BMC reports it, read resource by resource from the service root: the device's identity;
 * the processors and memory of its host system and of the GPU baseboard NVIDIA's BMC lists beside it (HGX_Baseboard_n;
 * never another host of a multi-system BMC, which is another device); each GPU's NVLink ports and rack location
 * (Oem.Nvidia.MNNVLinkTopology); the NVSwitch chips of an NVLink fabric and their ports; a shelf's power supplies; the
 * controllers' and the host's network interfaces; the firmware inventory.
 *
 * A member the BMC lists but answers 404 for is left out and named in `warnings` (a profile check then finds the part
 * missing); any other failure is thrown, naming the BMC, the URI and the cause.
 */
export async function readHardwareInventory(
  client: RedfishClient,
  opts: HardwareInventoryOptions,
): Promise<HardwareInventoryRead> {
  return client.discovered(async () => new InventoryReader(client, opts.onProgress).read(opts.source));
}

/** NVIDIA lists the HGX GPU baseboard as a system beside the host (as systems.ts knows): it is part of the device. */
const gpuBaseboard = /\/HGX_Baseboard_\d+$/;

type Body = Record<string, unknown>;

/** A string property; BMCs fill properties they do not know with "" (the GH200 capture's PartNumber), so none. */
const str = (b: Body, k: string): string | undefined => {
  const v = b[k];
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
};
const num = (b: Body, k: string): number | undefined => (typeof b[k] === 'number' ? (b[k] as number) : undefined);
const obj = (b: Body | undefined, k: string): Body | undefined => {
  const v = b?.[k];
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Body) : undefined;
};
const idOf = (uri: string, b: Body) => str(b, 'Id') ?? uri.slice(uri.lastIndexOf('/') + 1);

class InventoryReader {
  private readonly resources: Record<string, unknown> = {};
  private readonly warnings: string[] = [];
  private count = 0;
  /** The client as the library's own readers see it, except that every GET is recorded and counted. */
  private readonly recording: RedfishClient;

  constructor(
    private readonly client: RedfishClient,
    private readonly onProgress: ((resources: number) => void) | undefined,
  ) {
    const get = async <T>(uri: string): Promise<T> => {
      const body = await client.get<T>(uri);
      this.keep(uri, body as Body);
      this.onProgress?.(++this.count);
      return body;
    };
    this.recording = new Proxy(client, {
      get: (target, prop) => {
        if (prop === 'get') return get;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /**
   * Every resource under its own URI, whether read alone or inline in an expanded collection read: the record is the
   * same whatever the BMC offers.
   */
  private keep(uri: string, body: Body): void {
    const plain = uri.endsWith(expandQuery) ? uri.slice(0, -expandQuery.length - 1) : undefined;
    const members = body['Members'];
    if (plain === undefined || !Array.isArray(members)) {
      this.resources[uri] = body;
      return;
    }
    const links = members.map((m) => {
      const whole = inlineBody(m);
      if (!whole) return m;
      this.resources[trimSlash(whole['@odata.id'] as string)] = whole;
      return { '@odata.id': whole['@odata.id'] };
    });
    this.resources[plain] = { ...body, Members: links };
  }

  async read(source: InventorySource): Promise<HardwareInventoryRead> {
    this.resources[serviceRootUri] = await this.client.root();
    const root = this.resources[serviceRootUri] as Body;
    const inventory: BmcInventory = {
      identity: { uri: '' },
      summary: {},
      cpus: [],
      gpus: [],
      memory: [],
      nvswitches: [],
      powerSupplies: [],
      nics: [],
      firmware: [],
      nvlinkPorts: [],
      warnings: this.warnings,
    };
    if ('system' in source) await this.readSystems(inventory, source.system);
    else await this.readShelf(inventory, source.chassis);
    if (root['Fabrics']) await this.readFabrics(inventory);
    if (root['Managers']) await this.readManagers(inventory);
    else this.warnings.push('the service root lists no Managers: no controller interfaces');
    if (root['UpdateService']) {
      const firmware = await getFirmwareInventory(this.recording);
      this.warnings.push(...firmware.warnings);
      inventory.firmware = firmware.components.flatMap((c) => (c.version ? [{ id: c.id, version: c.version }] : []));
    } else this.warnings.push('the service root has no UpdateService: no firmware inventory');
    return { inventory, resources: this.resources };
  }

  private get(uri: string): Promise<Body> {
    return this.recording.get<Body>(uri);
  }

  /** A listed member, or undefined (and a warning) when the BMC answers 404 for it. */
  private async member(uri: string, what: string): Promise<Body | undefined> {
    try {
      return await this.get(uri);
    } catch (err) {
      if (!(err instanceof RedfishError) || err.code !== 'NotFound') throw err;
      this.warnings.push(`${what} ${uri} is listed but the BMC answers 404 for it`);
      return undefined;
    }
  }

  private async members(collectionUri: string | undefined, what: string): Promise<[string, Body][]> {
    if (!collectionUri) return [];
    const { members, warnings } = await readCollection(this.recording, collectionUri);
    this.warnings.push(...warnings);
    const out: [string, Body][] = [];
    for (const uri of members) {
      const body = await this.member(uri, what);
      if (body) out.push([uri, body]);
    }
    return out;
  }

  private async readSystems(inv: BmcInventory, systemId: string | undefined): Promise<void> {
    const hostUri = await systemUri(this.recording, systemId);
    const { members, warnings } = await readCollection(this.recording, await rootLink(this.recording, 'Systems'));
    this.warnings.push(...warnings);
    const host = await this.get(hostUri);
    inv.identity = identityOf(hostUri, host);
    inv.summary = { ...inv.summary, ...hostSummary(host) };
    await this.readSystemParts(inv, host, true);
    for (const uri of members.filter((m) => gpuBaseboard.test(m))) {
      const baseboard = await this.member(uri, 'system');
      if (!baseboard) continue;
      inv.summary = addGpuSummary(inv.summary, baseboard);
      await this.readSystemParts(inv, baseboard, false);
    }
  }

  /**
   * A system's processors, memory and interfaces. CPUs count on the host only: NVIDIA's baseboard lists the host's
   * CPUs a second time (HGX_CPU_n, without serial numbers, in the GH200 capture).
   */
  private async readSystemParts(inv: BmcInventory, system: Body, host: boolean): Promise<void> {
    for (const [uri, p] of await this.members(linkOf(system, 'Processors'), 'processor')) {
      const type = str(p, 'ProcessorType');
      if (type !== 'GPU' && !(type === 'CPU' && host)) continue;
      const part = partOf(uri, p, type === 'CPU' ? 'cpu' : 'gpu');
      (type === 'CPU' ? inv.cpus : inv.gpus).push({ ...part, ...compact({ cores: num(p, 'TotalCores') }) });
      const topology = obj(obj(obj(p, 'Oem'), 'Nvidia'), 'MNNVLinkTopology');
      if (topology && !inv.location) inv.location = locationOf(topology);
      if (type === 'GPU') inv.nvlinkPorts.push(...(await this.ports(part.id, linkOf(p, 'Ports'))));
    }
    for (const [uri, m] of await this.members(linkOf(system, 'Memory'), 'memory device')) {
      inv.memory.push({ ...partOf(uri, m, 'memory'), ...compact({ capacityMiB: num(m, 'CapacityMiB') }) });
    }
    for (const [uri, e] of await this.members(linkOf(system, 'EthernetInterfaces'), 'host interface')) {
      inv.nics.push(nicOf(str(system, 'Id') ?? '', uri, e));
    }
  }

  private async ports(part: string, collectionUri: string | undefined): Promise<NvlinkPort[]> {
    const ports: NvlinkPort[] = [];
    for (const [uri, p] of await this.members(collectionUri, 'port')) {
      const protocol = str(p, 'PortProtocol');
      if (protocol !== undefined && protocol !== 'NVLink') continue;
      ports.push({
        part,
        port: idOf(uri, p),
        ...compact<Omit<NvlinkPort, 'part' | 'port'>>({
          remotePortId: str(p, 'RemotePortId'),
          linkStatus: str(p, 'LinkStatus'),
          health: str(obj(p, 'Status') ?? {}, 'Health'),
        }),
      });
    }
    return ports;
  }

  private async readShelf(inv: BmcInventory, chassisId: string): Promise<void> {
    const uri = await memberUri(this.recording, 'Chassis', chassisId);
    inv.identity = identityOf(uri, await this.get(uri));
    const subsystem = await getPowerSubsystem(this.recording, chassisId);
    this.warnings.push(...subsystem.warnings);
    inv.powerSupplies = subsystem.powerSupplies.map((p) => ({
      id: p.id,
      kind: 'psu',
      ...compact<Omit<InventoryPart, 'id' | 'kind'>>({
        uri: p.uri,
        manufacturer: p.manufacturer,
        model: p.model,
        partNumber: p.partNumber,
        serialNumber: p.serialNumber,
        firmwareVersion: p.firmwareVersion,
        status: p.status ? statusOf(p.status) : undefined,
      }),
    }));
  }

  private async readFabrics(inv: BmcInventory): Promise<void> {
    for (const [, fabric] of await this.members(await rootLink(this.recording, 'Fabrics'), 'fabric')) {
      for (const [uri, s] of await this.members(linkOf(fabric, 'Switches'), 'switch')) {
        if (str(s, 'SwitchType') !== 'NVLink') continue;
        const part = partOf(uri, s, 'nvswitch');
        inv.nvswitches.push(part);
        const topology = obj(obj(obj(s, 'Oem'), 'Nvidia'), 'MNNVLinkTopology');
        if (topology && !inv.location) inv.location = locationOf(topology);
        inv.nvlinkPorts.push(...(await this.ports(part.id, linkOf(s, 'Ports'))));
      }
    }
  }

  private async readManagers(inv: BmcInventory): Promise<void> {
    for (const [uri, m] of await this.members(await rootLink(this.recording, 'Managers'), 'manager')) {
      for (const [nicUri, e] of await this.members(linkOf(m, 'EthernetInterfaces'), 'manager interface')) {
        inv.nics.push(nicOf(idOf(uri, m), nicUri, e));
      }
    }
  }
}

function statusOf(s: object): InventoryStatus {
  const b = s as Body;
  const conditions = Array.isArray(b['Conditions'])
    ? (b['Conditions'] as Body[]).flatMap((c) => {
        const m = str(c ?? {}, 'Message') ?? str(c ?? {}, 'MessageId');
        return m ? [m] : [];
      })
    : [];
  return compact<InventoryStatus>({
    state: str(b, 'State'),
    health: str(b, 'Health'),
    healthRollup: str(b, 'HealthRollup'),
    conditions: conditions.length ? conditions : undefined,
  });
}

function identityOf(uri: string, b: Body): InventoryIdentity {
  const status = obj(b, 'Status');
  return {
    uri,
    ...compact<Omit<InventoryIdentity, 'uri'>>({
      manufacturer: str(b, 'Manufacturer'),
      model: str(b, 'Model'),
      sku: str(b, 'SKU'),
      partNumber: str(b, 'PartNumber'),
      serialNumber: str(b, 'SerialNumber'),
      assetTag: str(b, 'AssetTag'),
      biosVersion: str(b, 'BiosVersion'),
      status: status ? statusOf(status) : undefined,
    }),
  };
}

function partOf(uri: string, b: Body, kind: InventoryPartKind): InventoryPart {
  const status = obj(b, 'Status');
  return {
    id: idOf(uri, b),
    kind,
    uri,
    ...compact<Omit<InventoryPart, 'id' | 'kind' | 'uri'>>({
      manufacturer: str(b, 'Manufacturer'),
      model: str(b, 'Model'),
      partNumber: str(b, 'PartNumber'),
      serialNumber: str(b, 'SerialNumber'),
      firmwareVersion: str(b, 'FirmwareVersion'),
      status: status ? statusOf(status) : undefined,
    }),
  };
}

function hostSummary(system: Body): InventorySummary {
  const processors = obj(system, 'ProcessorSummary') ?? {};
  return compact<InventorySummary>({
    cpuCount: num(processors, 'Count'),
    cpuCores: num(processors, 'CoreCount'),
    memoryGiB: num(obj(system, 'MemorySummary') ?? {}, 'TotalSystemMemoryGiB'),
  });
}

/** A GPU baseboard's summaries count its GPUs (a BMC that reports null there leaves them out). */
function addGpuSummary(summary: InventorySummary, baseboard: Body): InventorySummary {
  const count = num(obj(baseboard, 'ProcessorSummary') ?? {}, 'Count');
  const memory = num(obj(baseboard, 'MemorySummary') ?? {}, 'TotalSystemMemoryGiB');
  return {
    ...summary,
    ...(count !== undefined ? { gpuCount: (summary.gpuCount ?? 0) + count } : {}),
    ...(memory !== undefined ? { gpuMemoryGiB: (summary.gpuMemoryGiB ?? 0) + memory } : {}),
  };
}

function locationOf(t: Body): TrayLocation {
  return compact<TrayLocation>({
    chassisSerialNumber: str(t, 'ChassisSerialNumber'),
    slotNumber: num(t, 'TraySlotNumber'),
    slotIndex: num(t, 'TraySlotIndex'),
    traySerialNumber: str(t, 'TraySerialNumber'),
  });
}

function nicOf(owner: string, uri: string, e: Body): InventoryNic {
  const ipv4 = Array.isArray(e['IPv4Addresses']) ? (e['IPv4Addresses'] as Body[]) : [];
  return {
    owner,
    id: idOf(uri, e),
    uri,
    ipv4Addresses: ipv4.flatMap((a) => {
      const address = str(a ?? {}, 'Address');
      return address ? [address] : [];
    }),
    ...compact<Omit<InventoryNic, 'owner' | 'id' | 'uri' | 'ipv4Addresses'>>({
      macAddress: str(e, 'MACAddress') ?? str(e, 'PermanentMACAddress'),
      linkStatus: str(e, 'LinkStatus'),
      speedMbps: num(e, 'SpeedMbps'),
    }),
  };
}

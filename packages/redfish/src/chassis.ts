import { powerStates, type PowerState, type RedfishResetType } from '@fleet/domain';
import { postReset } from './actions.js';
import type { RedfishClient } from './client.js';
import { compact } from './compact.js';
import { linkOf, memberUri, readCollection, rootLink } from './discovery.js';
import { RedfishError } from './errors.js';

export interface ResourceStatus {
  State?: string;
  Health?: string;
  HealthRollup?: string;
}

export interface ChassisSummary {
  uri: string;
  id: string;
  name?: string;
  chassisType?: string;
  manufacturer?: string;
  model?: string;
  partNumber?: string;
  serialNumber?: string;
  powerState?: string;
  status?: ResourceStatus;
  powerSubsystemUri?: string;
  /** The older Power resource, on chassis that have it (some have only this). */
  powerUri?: string;
}

export interface PowerSupply {
  uri: string;
  id: string;
  name?: string;
  manufacturer?: string;
  model?: string;
  serialNumber?: string;
  partNumber?: string;
  firmwareVersion?: string;
  powerCapacityWatts?: number;
  lineInputStatus?: string;
  status?: ResourceStatus;
}

export interface PowerSubsystem {
  uri: string;
  /**
   * Which resource was read: the PowerSubsystem, or the older Power resource (deprecated in 2020.4, still served by
   * many BMCs).
   */
  source: 'PowerSubsystem' | 'Power';
  capacityWatts?: number;
  /** Power resource only: PowerControl's PowerConsumedWatts. */
  consumedWatts?: number;
  status?: ResourceStatus;
  powerSupplies: PowerSupply[];
  /** Inconsistencies in the BMC's collections (e.g. a PSU listed twice). */
  warnings: string[];
}

interface RawChassis {
  Id?: string;
  Name?: string;
  ChassisType?: string;
  Manufacturer?: string;
  Model?: string;
  PartNumber?: string;
  SerialNumber?: string;
  PowerState?: string;
  Status?: ResourceStatus;
}

/** Every chassis the BMC lists, each read once. */
export async function listChassis(client: RedfishClient): Promise<{ chassis: ChassisSummary[]; warnings: string[] }> {
  return client.discovered(async () => {
    const { members, warnings } = await readCollection(client, await rootLink(client, 'Chassis'));
    const chassis: ChassisSummary[] = [];
    for (const uri of members) chassis.push(summarise(uri, await client.get<RawChassis>(uri)));
    return { chassis, warnings };
  });
}

/**
 * The PowerSubsystem of one chassis (by Id) with its power supplies; a chassis that offers only
 * the older Power resource is read from that (its PowerSupplies and first PowerControl).
 */
export async function getPowerSubsystem(client: RedfishClient, chassisId: string): Promise<PowerSubsystem> {
  return client.discovered(async () => {
    const uri = await memberUri(client, 'Chassis', chassisId);
    const chassis = await client.get<unknown>(uri);
    const linked = linkOf(chassis, 'PowerSubsystem');
    if (!linked) {
      const legacy = linkOf(chassis, 'Power');
      if (legacy) return readLegacyPower(legacy, await client.get<RawPower>(legacy));
      throw new RedfishError('NotFound', client.bmc, uri, 'chassis has neither a PowerSubsystem nor a Power resource');
    }
    const warnings: string[] = [];
    let raw = await client.get<RawPowerSubsystem>(linked);
    let subsystemUri = linked;
    if (!isPowerSubsystem(raw)) {
      // The link points elsewhere (the DMTF power-shelf mockup links its Sensors). The
      // PowerSubsystem schema fixes the URI as <chassis>/PowerSubsystem, so try that.
      warnings.push(`${uri}: PowerSubsystem link ${linked} is a ${raw['@odata.type'] ?? 'resource of unknown type'}`);
      subsystemUri = `${uri}/PowerSubsystem`;
      raw = await client.get<RawPowerSubsystem>(subsystemUri);
      if (!isPowerSubsystem(raw))
        throw new RedfishError('NotFound', client.bmc, subsystemUri, 'no PowerSubsystem resource for this chassis');
    }
    return readPowerSubsystem(client, subsystemUri, raw, warnings);
  });
}

interface RawChassisWithPower {
  '@odata.id'?: string;
  PowerState?: string;
  Actions?: Record<string, unknown>;
}

const knownStates: readonly string[] = powerStates;

/** PowerState of a chassis (a power shelf's output), read fresh. */
export function chassisPowerState(client: RedfishClient, chassisId: string): Promise<PowerState> {
  return client.discovered(async () => {
    const state = (await client.get<RawChassisWithPower>(await memberUri(client, 'Chassis', chassisId))).PowerState;
    return state !== undefined && knownStates.includes(state) ? (state as PowerState) : 'Unknown';
  });
}

/** POSTs Chassis.Reset to the target the chassis advertises, if it (or its ActionInfo) allows `resetType`. */
export function resetChassis(client: RedfishClient, chassisId: string, resetType: RedfishResetType): Promise<void> {
  return client.discovered(async () => {
    const uri = await memberUri(client, 'Chassis', chassisId);
    await postReset(client, await client.get<RawChassisWithPower>(uri), uri, '#Chassis.Reset', resetType);
  });
}

interface RawPower {
  PowerControl?: { PowerCapacityWatts?: number; PowerConsumedWatts?: number; Status?: ResourceStatus }[];
  PowerSupplies?: Record<string, unknown>[];
}

function readLegacyPower(uri: string, raw: RawPower): PowerSubsystem {
  const controls: unknown = raw.PowerControl;
  const first: unknown = Array.isArray(controls) ? controls[0] : undefined;
  const control = isObject(first) ? (first as NonNullable<RawPower['PowerControl']>[number]) : undefined;
  const supplies: unknown = raw.PowerSupplies;
  const warnings: string[] = [];
  const seen = new Set<string>();
  const powerSupplies: PowerSupply[] = [];
  (Array.isArray(supplies) ? supplies : []).forEach((p: Record<string, unknown>, i) => {
    if (!isObject(p)) return void warnings.push(`${uri}: power supply ${i} is not an object`);
    // Power lists supplies inline, each named by MemberId and a JSON-pointer @odata.id.
    const id = typeof p['MemberId'] === 'string' ? p['MemberId'] : String(i);
    if (seen.has(id)) return void warnings.push(`${uri}: power supply ${id} listed more than once`);
    seen.add(id);
    const supplyUri = typeof p['@odata.id'] === 'string' ? p['@odata.id'] : `${uri}#/PowerSupplies/${i}`;
    powerSupplies.push(toPowerSupply(supplyUri, { ...p, Id: id }));
  });
  return compact<PowerSubsystem>({
    uri,
    source: 'Power',
    capacityWatts: numberOrUndefined(control?.PowerCapacityWatts),
    consumedWatts: numberOrUndefined(control?.PowerConsumedWatts),
    status: isObject(control?.Status) ? control?.Status : undefined,
    powerSupplies,
    warnings,
  });
}

interface RawPowerSubsystem {
  '@odata.type'?: string;
  CapacityWatts?: number;
  Status?: ResourceStatus;
}

function isPowerSubsystem(raw: RawPowerSubsystem): boolean {
  const type: unknown = raw['@odata.type'];
  return type === undefined || (typeof type === 'string' && type.startsWith('#PowerSubsystem.'));
}

const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
const numberOrUndefined = (v: unknown) => (typeof v === 'number' ? v : undefined);

async function readPowerSubsystem(
  client: RedfishClient,
  uri: string,
  raw: RawPowerSubsystem,
  found: string[],
): Promise<PowerSubsystem> {
  const suppliesUri = linkOf(raw, 'PowerSupplies');
  const collection = suppliesUri ? await readCollection(client, suppliesUri) : { members: [], warnings: [] };
  const members = collection.members;
  const warnings = [...found, ...collection.warnings];
  const powerSupplies: PowerSupply[] = [];
  for (const m of members) powerSupplies.push(toPowerSupply(m, await client.get<Record<string, unknown>>(m)));
  return {
    uri,
    source: 'PowerSubsystem',
    ...(typeof raw.CapacityWatts === 'number' ? { capacityWatts: raw.CapacityWatts } : {}),
    ...(isObject(raw.Status) ? { status: raw.Status } : {}),
    powerSupplies,
    warnings,
  };
}

function summarise(uri: string, c: RawChassis): ChassisSummary {
  const raw = c as Record<string, unknown>;
  const str = (k: string) => (typeof raw[k] === 'string' ? (raw[k] as string) : undefined);
  return compact({
    uri,
    id: str('Id') ?? uri.slice(uri.lastIndexOf('/') + 1),
    name: str('Name'),
    chassisType: str('ChassisType'),
    manufacturer: str('Manufacturer'),
    model: str('Model'),
    partNumber: str('PartNumber'),
    serialNumber: str('SerialNumber'),
    powerState: str('PowerState'),
    status: isObject(c.Status) ? c.Status : undefined,
    powerSubsystemUri: linkOf(c, 'PowerSubsystem'),
    powerUri: linkOf(c, 'Power'),
  });
}

function toPowerSupply(uri: string, p: Record<string, unknown>): PowerSupply {
  const str = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : undefined);
  return compact({
    uri,
    id: str('Id') ?? uri.slice(uri.lastIndexOf('/') + 1),
    name: str('Name'),
    manufacturer: str('Manufacturer'),
    model: str('Model'),
    serialNumber: str('SerialNumber'),
    partNumber: str('PartNumber'),
    firmwareVersion: str('FirmwareVersion'),
    powerCapacityWatts: typeof p['PowerCapacityWatts'] === 'number' ? p['PowerCapacityWatts'] : undefined,
    lineInputStatus: str('LineInputStatus'),
    status: isObject(p['Status']) ? (p['Status'] as ResourceStatus) : undefined,
  });
}

import {
  normaliseFaults,
  powerStates,
  type FaultClass,
  type FaultSeverity,
  type HealthFault,
  type HealthReading,
  type PowerState,
} from '@fleet/domain';
import type { RedfishClient } from './client.js';
import { linkOf, memberUri, readCollection, trimSlash } from './discovery.js';
import { RedfishError } from './errors.js';
import { systemUri } from './systems.js';

/**
 * Where a device's health is read (docs/day2.md): `chassis`, the Id of the chassis that is the device (an NVIDIA
 * tray's BMC_0, a shelf's powershelf), whose Status.HealthRollup covers every part in it; `system`, its host system as
 * systemUri finds it (by Id, else the BMC's only host), whose PowerState is the device's. A device without a system (a
 * power shelf) takes its PowerState from the chassis.
 */
export interface HealthSource {
  chassis: string;
  system?: { id: string | undefined };
}

type Body = Record<string, unknown>;
interface Resource {
  uri: string;
  body: Body;
}

/**
 * One health reading of a BMC that answers. The normal case is two GETs (the system, the chassis; one on a shelf)
 * once their links are discovered: both rollups OK means no faults. Only when one is not OK does it walk down, and only
 * into resources whose own rollup is not OK, to name the parts (fault classes gpu, psu, leak, thermal, chassis).
 * Throws RedfishError when the BMC refuses, or does not answer, the reads.
 */
export function readDeviceHealth(client: RedfishClient, source: HealthSource): Promise<HealthReading> {
  return client.discovered(async () => {
    const system = source.system ? await read(client, await systemUri(client, source.system.id)) : undefined;
    const chassis = await read(client, await memberUri(client, 'Chassis', source.chassis));
    const powerState = powerStateOf((system ?? chassis).body);
    const reading = { reachable: true, credentialsOk: true, powerState };
    if (!rollupOf(chassis.body) && !(system && rollupOf(system.body))) return { ...reading, faults: [] };
    const faults = await new FaultFinder(client, powerState === 'On').find(chassis, system);
    return { ...reading, faults: normaliseFaults(faults) };
  });
}

async function read(client: RedfishClient, uri: string): Promise<Resource> {
  return { uri, body: await client.get<Body>(uri) };
}

const knownStates: readonly string[] = powerStates;
const powerStateOf = (b: Body): PowerState =>
  typeof b['PowerState'] === 'string' && knownStates.includes(b['PowerState'])
    ? (b['PowerState'] as PowerState)
    : 'Unknown';

const severityOf = (v: unknown): FaultSeverity | undefined => (v === 'Warning' || v === 'Critical' ? v : undefined);
const worse = (a: FaultSeverity | undefined, b: FaultSeverity | undefined) =>
  a === 'Critical' || b === 'Critical' ? 'Critical' : (a ?? b);

const obj = (v: unknown): Body | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Body) : undefined;
const str = (b: Body, k: string): string | undefined => (typeof b[k] === 'string' ? (b[k] as string) : undefined);
const status = (b: Body): Body => obj(b['Status']) ?? {};
/** The resource's own health (Status.Health). */
const ownHealth = (b: Body) => severityOf(status(b)['Health']);
/** The worst of its own health and of what is under it (Status.HealthRollup); undefined when both are OK or absent. */
const rollupOf = (b: Body) => worse(ownHealth(b), severityOf(status(b)['HealthRollup']));

/** The URIs of a Links property, whether the schema makes it one link or an array of them. */
function linksOf(b: Body, name: string): string[] {
  const v = obj(b['Links'])?.[name];
  const list = Array.isArray(v) ? v : v ? [v] : [];
  return list.flatMap((l) => {
    const id = obj(l)?.['@odata.id'];
    return typeof id === 'string' ? [trimSlash(id)] : [];
  });
}

/** The message of the first Status.Conditions entry: NVIDIA's BMC says there what went wrong (an XID, a reason). */
function conditionOf(b: Body): string | undefined {
  const conditions = status(b)['Conditions'];
  const first = Array.isArray(conditions) ? obj(conditions[0]) : undefined;
  return first ? str(first, 'Message') : undefined;
}

/** A sensor reading against its Thresholds: past a critical or fatal one is Critical, past a caution one Warning. */
function thresholdSeverity(b: Body): { severity: FaultSeverity; threshold: string } | undefined {
  const reading = b['Reading'];
  const thresholds = obj(b['Thresholds']);
  if (typeof reading !== 'number' || !thresholds) return undefined;
  const crossed = (name: string, above: boolean) => {
    const limit = obj(thresholds[name])?.['Reading'];
    return typeof limit === 'number' && (above ? reading >= limit : reading <= limit);
  };
  for (const [name, above, severity] of [
    ['UpperFatal', true, 'Critical'],
    ['UpperCritical', true, 'Critical'],
    ['LowerFatal', false, 'Critical'],
    ['LowerCritical', false, 'Critical'],
    ['UpperCaution', true, 'Warning'],
    ['LowerCaution', false, 'Warning'],
  ] as const) {
    if (crossed(name, above)) return { severity, threshold: name };
  }
  return undefined;
}

/**
 * A missing, failing or unreadable sub-resource (404, 5xx, not Redfish) leaves its branch unexplained rather than
 * losing the whole reading.
 */
const skippable = (err: unknown) =>
  err instanceof RedfishError && (err.code === 'NotFound' || err.code === 'Internal' || err.code === 'Protocol');

/**
 * The drill-down of one reading: from the device's chassis through Links.Contains, each chassis's ThermalSubsystem
 * (leak detectors, temperature sensors) and PowerSubsystem (or older Power), and the processors of the systems the
 * unhealthy chassis link; a subtree whose rollup is OK is not entered. A rollup that is not OK with no part under it
 * to blame still yields a `chassis` fault, so an unhealthy device never reads healthy.
 */
class FaultFinder {
  private readonly faults: HealthFault[] = [];
  private readonly seen = new Set<string>();
  /** Systems to look into, with their body when already read. */
  private readonly systems = new Map<string, Resource | undefined>();
  /** Chassis whose own Health is not OK: a chassis fault unless a part found faulty is that chassis (a GPU's). */
  private readonly suspects: Resource[] = [];
  private readonly explained = new Set<string>();

  constructor(
    private readonly client: RedfishClient,
    private readonly hostOn: boolean,
  ) {}

  async find(chassis: Resource, system: Resource | undefined): Promise<HealthFault[]> {
    if (system) this.systems.set(system.uri, system);
    await this.chassis(chassis);
    for (const [uri, known] of this.systems) {
      const s = known ?? (await this.get(uri));
      if (s) await this.system(s);
    }
    for (const c of this.suspects) {
      if (!this.explained.has(c.uri))
        this.add('chassis', c, ownHealth(c.body)!, conditionOf(c.body) ?? `${idOf(c)}: Health ${ownHealth(c.body)}`);
    }
    if (this.faults.length === 0) {
      const top = [chassis, system].find((r) => r && rollupOf(r.body))!;
      const severity = rollupOf(top.body)!;
      this.add('chassis', top, severity, `${idOf(top)}: HealthRollup ${severity}, and no part under it says why`);
    }
    return this.faults;
  }

  private async chassis(c: Resource): Promise<void> {
    if (this.seen.has(c.uri)) return;
    this.seen.add(c.uri);
    if (!rollupOf(c.body)) return;
    if (ownHealth(c.body)) this.suspects.push(c);
    await this.thermal(c);
    await this.power(c);
    for (const uri of linksOf(c.body, 'ComputerSystems')) if (!this.systems.has(uri)) this.systems.set(uri, undefined);
    for (const uri of linksOf(c.body, 'Contains')) {
      const child = await this.get(uri);
      if (child) await this.chassis(child);
    }
  }

  private async thermal(c: Resource): Promise<void> {
    const subsystemUri = linkOf(c.body, 'ThermalSubsystem');
    if (subsystemUri) {
      const subsystem = await this.get(subsystemUri);
      if (!subsystem || !rollupOf(subsystem.body)) return;
      await this.leaks(subsystem);
      await this.temperatures(c);
      return;
    }
    // Before ThermalSubsystem (2020.4) temperatures were inline in Chassis/Thermal, each with its Status.
    const legacyUri = linkOf(c.body, 'Thermal');
    const legacy = legacyUri ? await this.get(legacyUri) : undefined;
    const temperatures = legacy?.body['Temperatures'];
    for (const t of Array.isArray(temperatures) ? temperatures : []) {
      const b = obj(t);
      if (b) this.temperature({ uri: legacy!.uri, body: b }, str(b, 'Name') ?? str(b, 'MemberId'));
    }
  }

  private async leaks(thermal: Resource): Promise<void> {
    const detectionUri = linkOf(thermal.body, 'LeakDetection');
    const detection = detectionUri ? await this.get(detectionUri) : undefined;
    if (!detection || !rollupOf(detection.body)) return;
    const detectorsUri = linkOf(detection.body, 'LeakDetectors');
    for (const uri of detectorsUri ? await this.members(detectorsUri) : []) {
      const d = await this.get(uri);
      if (!d) continue;
      const state = d.body['DetectorState'];
      // Any state but OK is a leak: liquid where it should not be is Critical whatever the detector grades it.
      if (severityOf(state) || ownHealth(d.body))
        this.add('leak', d, 'Critical', `${str(d.body, 'Name') ?? idOf(d)}: DetectorState ${String(state)}`);
    }
  }

  private async temperatures(c: Resource): Promise<void> {
    const sensorsUri = linkOf(c.body, 'Sensors');
    for (const uri of sensorsUri ? await this.members(sensorsUri) : []) {
      const s = await this.get(uri);
      if (s && (s.body['ReadingType'] === 'Temperature' || s.body['ReadingUnits'] === 'Cel')) this.temperature(s);
    }
  }

  private temperature(s: Resource, name?: string): void {
    const past = thresholdSeverity(s.body);
    const severity = worse(ownHealth(s.body), past?.severity);
    if (!severity) return;
    const reading = s.body['ReadingCelsius'] ?? s.body['Reading'];
    const beyond = past ? `, past its ${past.threshold} threshold` : '';
    this.add('thermal', s, severity, `${name ?? idOf(s)} reads ${String(reading)} °C${beyond}`, name);
  }

  private async power(c: Resource): Promise<void> {
    const subsystemUri = linkOf(c.body, 'PowerSubsystem');
    const subsystem = subsystemUri ? await this.get(subsystemUri) : undefined;
    // A link to something else (the DMTF power-shelf mockup links its Sensors) counts as no PowerSubsystem.
    if (subsystem && isA(subsystem.body, 'PowerSubsystem')) {
      if (!rollupOf(subsystem.body)) return;
      const before = this.faults.length;
      const suppliesUri = linkOf(subsystem.body, 'PowerSupplies');
      for (const uri of suppliesUri ? await this.members(suppliesUri) : []) {
        const p = await this.get(uri);
        if (p) this.psu(p);
      }
      // Redundancy lost with no supply to blame, say.
      const own = ownHealth(subsystem.body);
      if (this.faults.length === before && own) this.add('psu', subsystem, own, `${idOf(subsystem)}: Health ${own}`);
      return;
    }
    // The older Power resource lists its supplies inline (many BMCs still serve only that).
    const legacyUri = linkOf(c.body, 'Power');
    const legacy = legacyUri ? await this.get(legacyUri) : undefined;
    const supplies = legacy?.body['PowerSupplies'];
    for (const p of Array.isArray(supplies) ? supplies : []) {
      const b = obj(p);
      if (b) this.psu({ uri: legacy!.uri, body: b }, str(b, 'Name') ?? str(b, 'MemberId'));
    }
  }

  private psu(p: Resource, name?: string): void {
    const severity = rollupOf(p.body);
    if (severity) this.add('psu', p, severity, conditionOf(p.body) ?? `${name ?? idOf(p)}: Health ${severity}`, name);
  }

  private async system(s: Resource): Promise<void> {
    if (!rollupOf(s.body)) return;
    const processorsUri = linkOf(s.body, 'Processors');
    for (const uri of processorsUri ? await this.members(processorsUri) : []) {
      const p = await this.get(uri);
      if (p) await this.processor(p);
    }
  }

  /**
   * A GPU fallen off the bus stays listed with State Absent (bmcweb keeps the inventory entry) or UnavailableOffline;
   * while the host is on, either is Critical. A part whose own Health is OK but whose rollup is not has a sick memory
   * device or link: it is named when its memory says so.
   */
  private async processor(p: Resource): Promise<void> {
    const st = status(p.body);
    const gpu = p.body['ProcessorType'] === 'GPU';
    const gone = gpu && this.hostOn && (st['State'] === 'Absent' || st['State'] === 'UnavailableOffline');
    const severity = gone ? 'Critical' : rollupOf(p.body);
    if (!severity) return;
    let message = conditionOf(p.body) ?? (gone ? `${idOf(p)} is ${String(st['State'])}: off the bus` : undefined);
    if (!message && !ownHealth(p.body)) message = await this.sickPart(p, severity);
    this.add(gpu ? 'gpu' : 'chassis', p, severity, message ?? `${idOf(p)}: Health ${severity}`);
    for (const uri of linksOf(p.body, 'Chassis')) this.explained.add(uri);
  }

  private async sickPart(p: Resource, severity: FaultSeverity): Promise<string> {
    for (const uri of linksOf(p.body, 'Memory')) {
      const m = await this.get(uri);
      const health = m && ownHealth(m.body);
      if (health) return `${idOf(p)}: its memory ${idOf(m)} is ${health}${note(conditionOf(m.body))}`;
    }
    return `${idOf(p)}: HealthRollup ${severity} (a part of it, such as an NVLink port, is not OK)`;
  }

  private add(cls: FaultClass, r: Resource, severity: FaultSeverity, message: string, name?: string): void {
    this.faults.push({ class: cls, component: name ?? idOf(r), severity, message });
  }

  private async get(uri: string): Promise<Resource | undefined> {
    try {
      return await read(this.client, uri);
    } catch (err) {
      if (skippable(err)) return undefined;
      throw err;
    }
  }

  private async members(uri: string): Promise<string[]> {
    try {
      return (await readCollection(this.client, uri)).members;
    } catch (err) {
      if (skippable(err)) return [];
      throw err;
    }
  }
}

/** Whether a resource is of the schema, when it says (@odata.type is `#PowerSubsystem.v1_1_0.PowerSubsystem`). */
const isA = (b: Body, schema: string) => str(b, '@odata.type')?.startsWith(`#${schema}.`) ?? true;
const idOf = (r: Resource) => str(r.body, 'Id') ?? r.uri.slice(r.uri.lastIndexOf('/') + 1);
const note = (text: string | undefined) => (text ? ` (${text})` : '');

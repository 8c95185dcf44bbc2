import {
  campaignCandidates,
  heldDevices,
  installedFirmware,
  manifestsByIdOrDefault,
  type Db,
  type Device,
  type FirmwareManifest,
} from '@fleet/db';
import {
  buildWaves,
  holdText,
  makespanLowerBound,
  missingForOperation,
  powerDomainOf,
  simulateMakespan,
  type CampaignPlan,
  type CampaignPolicy,
  roleOfNodeType,
  type PlannedDevice,
} from '@fleet/domain';
import type { HubConfig } from '../config.js';
import { invalid } from '../errors.js';

/** The most devices one campaign takes: its plan is the campaign workflow's input and must stay small. */
export const MAX_CAMPAIGN_DEVICES = 5000;

export type DeviceDurations = HubConfig['campaigns']['deviceDurationS'];

/** A plan before its device jobs exist, with the floor no schedule can beat beside the estimate. */
export interface DraftPlan extends Omit<CampaignPlan, 'devices'> {
  devices: Omit<PlannedDevice, 'jobId'>[];
  lowerBoundS: number;
}

export interface PlanRequest {
  siteId: string;
  rackIds?: string[] | undefined;
  deviceIds?: string[] | undefined;
  nodeTypes?: string[] | undefined;
  /** Node type → manifest id; the other types get their default manifest. */
  manifests?: Partial<Record<string, string>> | undefined;
  policy: CampaignPolicy;
  /** Plan held devices (quarantined, remediating, rma) like the others: an operator overrode their holds. */
  overrideHolds?: boolean | undefined;
}

/** Why Fleet cannot operate the device, in words an operator can act on; undefined when it can. */
export function inoperableReason(d: Device): string | undefined {
  if (d.deletedAt) return 'deleted from the inventory';
  const missing = missingForOperation(d);
  return missing.length ? `the inventory gives no ${missing.join(', ')}` : undefined;
}

/**
 * The manifest each node type gets: the one the request names (which must exist and be for
 * that type; `field` names the request field in the 400), else the type's default, if any.
 */
export async function manifestsForTypes(
  db: Db,
  types: string[],
  named: Partial<Record<string, string>>,
  field: (type: string) => string,
): Promise<Map<string, FirmwareManifest>> {
  const namedEntries = Object.entries(named).filter((e): e is [string, string] => e[1] !== undefined);
  const rows = await manifestsByIdOrDefault(
    db,
    namedEntries.map(([, id]) => id),
    types.filter((t) => named[t] === undefined),
  );
  const out = new Map<string, FirmwareManifest>();
  for (const [type, id] of namedEntries) {
    const m = rows.find((r) => r.id === id);
    if (!m) throw invalid(field(type), `manifest ${id} does not exist`);
    if (m.hardwareType !== type) throw invalid(field(type), `manifest ${m.name} is for ${m.hardwareType}, not ${type}`);
    out.set(type, m);
  }
  for (const m of rows) if (m.isDefault && !out.has(m.hardwareType)) out.set(m.hardwareType, m);
  return out;
}

/** What to push: components whose installed version differs from the manifest or is unknown; all when forced. */
function componentsToUpdate(
  m: FirmwareManifest,
  installed: Map<string, string> | undefined,
  force: boolean,
): PlannedDevice['components'] {
  const wanted = new Map(m.steps.flatMap((s) => s.components.map((c) => [c.id, c.version] as const)));
  const all = [...wanted].map(([id, to]) => ({ id, from: installed?.get(id) ?? null, to }));
  return force ? all : all.filter((c) => c.from !== c.to);
}

/**
 * Plans a campaign from Postgres alone: which devices of the selection need which components,
 * which are left out and why (held devices with the state, since when and why, unless their
 * holds are overridden), the waves, and how long the waves take under the policy's caps.
 */
export async function planCampaign(db: Db, req: PlanRequest, durations: DeviceDurations): Promise<DraftPlan> {
  const excluded: DraftPlan['excluded'] = [];
  const candidates: Device[] = [];
  for (const d of await campaignCandidates(db, req)) {
    const reason = inoperableReason(d);
    if (reason) excluded.push({ deviceId: d.id, name: d.name, reason });
    else candidates.push(d);
  }
  const holds = req.overrideHolds
    ? []
    : await heldDevices(
        db,
        candidates.map((d) => d.id),
      );
  for (const h of holds) excluded.push({ deviceId: h.deviceId, name: h.name, reason: holdText(h) });
  const held = new Set(holds.map((h) => h.deviceId));
  const operable = candidates.filter((d) => !held.has(d.id));
  const types = [...new Set(operable.map((d) => d.nodeType!))];
  const [manifests, installed] = await Promise.all([
    manifestsForTypes(db, types, req.manifests ?? {}, (t) => `body.manifests.${t}`),
    installedFirmware(
      db,
      operable.map((d) => d.id),
    ),
  ]);
  const devices: DraftPlan['devices'] = [];
  for (const d of operable) {
    const manifest = manifests.get(d.nodeType!);
    const components = manifest && componentsToUpdate(manifest, installed.get(d.id), req.policy.force);
    if (!manifest)
      excluded.push({
        deviceId: d.id,
        name: d.name,
        reason: `no manifest for ${d.nodeType}: name one in manifests or set a default`,
      });
    else if (!components?.length) excluded.push({ deviceId: d.id, name: d.name, reason: 'already compliant' });
    else
      devices.push({
        deviceId: d.id,
        name: d.name,
        rackId: d.rackId,
        powerDomain: powerDomainOf(d),
        nodeType: d.nodeType!,
        manifestId: manifest.id,
        components,
      });
  }
  if (devices.length > MAX_CAMPAIGN_DEVICES) {
    throw invalid(
      'body',
      `${devices.length} devices need an update and a campaign takes at most ${MAX_CAMPAIGN_DEVICES}: ` +
        `narrow it with rack_ids, device_ids or node_types`,
    );
  }
  const waves = buildWaves(devices, req.policy.canarySize, req.policy.waveSize);
  const durationS = (d: { nodeType: string }) => durations[roleOfNodeType(d.nodeType)];
  const canary = new Set(waves[0]?.kind === 'canary' ? waves[0].deviceIds : []);
  return {
    devices,
    waves,
    excluded,
    estimatedDurationS: simulateMakespan(devices, waves, req.policy, durationS),
    lowerBoundS: makespanLowerBound(
      devices,
      req.policy,
      durationS,
      devices.filter((d) => canary.has(d.deviceId)),
    ),
  };
}

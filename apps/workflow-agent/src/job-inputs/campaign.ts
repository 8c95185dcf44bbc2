import {
  getCampaignRow,
  getDevicesByIds,
  resolveManifests,
  setJobState,
  siteMaintenanceWindows,
  type Device,
  type ResolvedManifest,
} from '@fleet/db';
import {
  defaultSwitchFirmwareTimings,
  roleOfNodeType,
  switchFirmwareComponents,
  type CampaignDeviceInput,
  type PlannedDevice,
} from '@fleet/domain';
import { MissingInventoryError, PermanentIntentError } from './errors.js';
import { activityOf, firmwareTimings } from './shared.js';
import { deviceTarget, nvosTarget } from './targets.js';
import type { InputLoader } from './types.js';

/**
 * A campaign's input: its devices as targets with their plan placement, and every manifest resolved once. A device
 * the inventory can no longer operate fails up front (its own job, with the reason) and the campaign goes on without
 * it.
 */
export const firmwareCampaignInput: InputLoader<'firmware.campaign'> = async ({ db, config }, job) => {
  const campaign = await getCampaignRow(db, job.id);
  if (!campaign) throw new PermanentIntentError('NOT_FOUND', `campaign ${job.id} has no plan`);
  const planned = campaign.plan.devices;
  const manifests = await resolveManifests(
    db,
    planned.map((d) => d.manifestId),
  );
  const rows = new Map(
    (
      await getDevicesByIds(
        db,
        planned.map((d) => d.deviceId),
      )
    ).map((d) => [d.id, d]),
  );
  const devices: CampaignDeviceInput[] = [];
  for (const p of planned) {
    try {
      devices.push(campaignDevice(p, rows.get(p.deviceId), manifests));
    } catch (err) {
      if (!(err instanceof PermanentIntentError)) throw err;
      const reason = err instanceof MissingInventoryError ? err.reason : err.message;
      await setJobState(db, p.jobId, 'failed', { code: err.code, message: `${p.name}: ${reason}` });
    }
  }
  const wanted = new Set(devices.map((d) => d.deviceId));
  return {
    jobId: job.id,
    siteId: campaign.siteId,
    policy: campaign.policy,
    maxSwitchShareOfRack: config.firmware.maxSwitchShareOfRack,
    historyBudget: config.firmware.campaignHistoryBudget,
    devices,
    manifests: Object.fromEntries(
      [...manifests].map(([id, m]) => [id, { steps: m.steps, expectedInventory: m.expectedInventory }]),
    ),
    // Devices that failed up front are dropped from the waves.
    waves: campaign.plan.waves.map((w) => ({ ...w, deviceIds: w.deviceIds.filter((id) => wanted.has(id)) })),
    windows: await siteMaintenanceWindows(db, campaign.siteId),
    timings: firmwareTimings(config.firmware),
    switchTimings: defaultSwitchFirmwareTimings,
    activity: activityOf(config.power),
  };
};

/** A planned device as the campaign runs it; throws, saying why, when it can no longer be updated. */
function campaignDevice(
  p: PlannedDevice,
  row: Device | undefined,
  manifests: Map<string, ResolvedManifest>,
): CampaignDeviceInput {
  if (!row) throw new MissingInventoryError(p.name, ['device']);
  const target = deviceTarget(row);
  const manifest = manifests.get(p.manifestId);
  if (!manifest)
    throw new PermanentIntentError('FAILED_PRECONDITION', `manifest ${p.manifestId} or a package of it is gone`);
  const role = roleOfNodeType(p.nodeType);
  const nvos =
    role === 'switch' && isSwitchComponentManifest(manifest) ? nvosTarget(row, 'a switch firmware update') : undefined;
  return {
    deviceId: p.deviceId,
    jobId: p.jobId,
    rackId: p.rackId,
    powerDomain: p.powerDomain,
    nodeType: p.nodeType,
    manifestId: p.manifestId,
    target,
    role,
    ...(nvos ? { nvos } : {}),
  };
}

/** A manifest whose steps are NVUE platform components (bmc, erot, …) updates a switch over NVOS. */
function isSwitchComponentManifest(m: ResolvedManifest): boolean {
  return m.steps.every((s) => (switchFirmwareComponents as readonly string[]).includes(s.name));
}

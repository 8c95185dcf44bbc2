import {
  childrenOf,
  getDevice,
  getDevicesByIds,
  resolveManifests,
  type Device,
  type Job,
  type ResolvedManifest,
} from '@fleet/db';
import type { ActivityTimeouts, FirmwareTimings } from '@fleet/domain';
import type { AgentConfig } from '../config.js';
import { PermanentIntentError } from './errors.js';
import type { LoaderDeps } from './types.js';

/** The device a device job acts on, as the inventory has it now. */
export async function loadDevice({ db }: LoaderDeps, job: Job): Promise<Device> {
  if (!job.deviceId) throw new PermanentIntentError('INVALID_ARGUMENT', 'device job without a device');
  const device = await getDevice(db, job.deviceId);
  if (!device) throw new PermanentIntentError('NOT_FOUND', `device ${job.deviceId} no longer exists`);
  return device;
}

/** A rack job's devices: those of its children (one per device, created with the job). */
export async function loadRackDevices({ db }: LoaderDeps, job: Job): Promise<Device[]> {
  const children = await childrenOf(db, job.id);
  return getDevicesByIds(
    db,
    children.flatMap((c) => (c.deviceId ? [c.deviceId] : [])),
  );
}

/** The job's manifest (params.manifest_id) with its packages by digest. */
export async function loadManifest({ db }: LoaderDeps, job: Job): Promise<ResolvedManifest> {
  const manifestId = String(job.params['manifest_id'] ?? '');
  const manifest = (await resolveManifests(db, [manifestId])).get(manifestId);
  if (!manifest)
    throw new PermanentIntentError(
      'FAILED_PRECONDITION',
      `manifest ${manifestId} or one of its packages no longer exists`,
    );
  return manifest;
}

export function activityOf(power: AgentConfig['power']): ActivityTimeouts {
  return {
    heartbeatTimeoutS: power.heartbeatTimeoutS,
    startToCloseTimeoutS: power.startToCloseTimeoutS,
    maximumAttempts: power.maximumAttempts,
  };
}

export function firmwareTimings(fw: AgentConfig['firmware']): FirmwareTimings {
  const { maxSwitchShareOfRack: _share, campaignHistoryBudget: _budget, ...timings } = fw;
  return timings;
}

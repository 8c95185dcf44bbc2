import { resolveDefaultManifests, type Device, type Job } from '@fleet/db';
import {
  burnInTestTable,
  kindOfNodeType,
  roleOfNodeType,
  type EnrolmentDevice,
  type EnrolmentInput,
  type EnrolmentMode,
} from '@fleet/domain';
import { PermanentIntentError } from './errors.js';
import { activityOf, firmwareTimings, loadDevice, loadRackDevices } from './shared.js';
import { deviceTarget } from './targets.js';
import type { InputLoader, LoaderDeps } from './types.js';

/** A rack enrolment enrols the devices of its children (one per device, created with the job). */
export const rackEnrolInput: InputLoader<'rack.enrol'> = async (deps, job) =>
  enrolmentInput(deps, job, 'rack', await loadRackDevices(deps, job));

export const deviceEnrolInput: InputLoader<'device.enrol'> = async (deps, job) =>
  enrolmentInput(deps, job, 'device', [await loadDevice(deps, job)]);

export const burnInInput: InputLoader<'device.burn_in'> = async (deps, job) =>
  enrolmentInput(deps, job, 'burn_in', [await loadDevice(deps, job)]);

/**
 * The devices as targets, each with its node type's default manifest (the firmware baseline) and NetBox's serial. A
 * device without a rack runs only the tray tests: the rack test needs the rack's NVLink domain.
 */
async function enrolmentInput(
  { db, config }: LoaderDeps,
  job: Job,
  mode: EnrolmentMode,
  devices: Device[],
): Promise<EnrolmentInput> {
  if (devices.length === 0) throw new PermanentIntentError('FAILED_PRECONDITION', 'no devices to enrol');
  const sorted = [...devices].sort((a, b) => a.name.localeCompare(b.name));
  const manifests = await resolveDefaultManifests(
    db,
    sorted.flatMap((d) => (d.nodeType ? [d.nodeType] : [])),
  );
  const members: EnrolmentDevice[] = sorted.map((d) => {
    const target = deviceTarget(d);
    const kind = kindOfNodeType(target.nodeType);
    if (!kind) throw new PermanentIntentError('FAILED_PRECONDITION', `${d.name}: unknown node type ${target.nodeType}`);
    const manifest = manifests.get(target.nodeType);
    return {
      target,
      name: d.name,
      kind,
      burnInName: d.name,
      ...(d.serial ? { netboxSerial: d.serial } : {}),
      ...(manifest
        ? {
            firmware: {
              manifestId: manifest.id,
              role: roleOfNodeType(target.nodeType),
              steps: manifest.steps,
              expectedInventory: manifest.expectedInventory,
            },
          }
        : {}),
    };
  });
  const rackId = job.rackId ?? (devices.length === 1 ? devices[0]!.rackId : null) ?? undefined;
  const e = config.enrolment;
  return {
    jobId: job.id,
    siteId: job.siteId!,
    ...(rackId ? { rackId } : {}),
    mode,
    devices: members,
    burnIn: {
      tests: e.burnInTests.filter((t) => rackId || burnInTestTable[t].scope === 'tray'),
      startToCloseS: e.burnInTimeoutS,
      heartbeatTimeoutS: e.burnInHeartbeatTimeoutS,
    },
    firmware: firmwareTimings(config.firmware),
    settleTimeoutS: config.power.settleTimeoutS,
    activity: activityOf(config.power),
  };
}

import {
  coldRebootTimings,
  missingForOperation,
  PowerAction,
  RackPowerOp,
  type BmcTarget,
  type ColdRebootInput,
  type DeviceBmcResetInput,
  type DevicePowerRefreshInput,
  type ManagerKind,
  type DevicePowerInput,
  type RackPowerInput,
  type RackTargets,
  type CampaignDeviceInput,
  type DeviceFirmwareUpdateInput,
  type FirmwareCampaignInput,
  type FirmwareTimings,
  type MaintenanceWindowSpec,
  type NodeRole,
  defaultSwitchFirmwareTimings,
  defaultSwitchRebootTimings,
  type SwitchCertificateInstallInput,
  type SwitchFactoryResetInput,
  type SwitchFirmwareStep,
  type SwitchFirmwareUpdateInput,
  type SwitchPasswordRotationInput,
  type NvosTarget,
  type SwitchNvosInstallInput,
  missingForNvos,
  parseHostPort,
  roleOfNodeType,
} from '@fleet/domain';
import type { Campaign, Device, FirmwarePackage, Job, ResolvedManifest } from '@fleet/db';
import type { AgentConfig } from './config.js';

/** The workflow input for a device power job: IDs and references only, never secrets. */
export function devicePowerInput(job: Job, device: Device, power: AgentConfig['power']): DevicePowerInput | string[] {
  const missing = missingForOperation(device);
  if (missing.length > 0 || !device.nodeType || !device.bmcUrl || !device.credentialRef) return missing;
  return {
    jobId: job.id,
    action: PowerAction.parse(job.params['action']),
    target: bmcTarget(device, device.nodeType, device.bmcUrl, device.credentialRef),
    settleTimeoutS: power.settleTimeoutS,
    activity: activityOf(power),
  };
}

function activityOf(power: AgentConfig['power']) {
  return {
    heartbeatTimeoutS: power.heartbeatTimeoutS,
    startToCloseTimeoutS: power.startToCloseTimeoutS,
    maximumAttempts: power.maximumAttempts,
  };
}

/** A rack job's devices by power class; devices the inventory cannot operate are named. */
export function rackTargets(devices: Device[]): RackTargets | string[] {
  const targets: RackTargets = { shelves: [], switches: [], compute: [] };
  const problems: string[] = [];
  for (const d of [...devices].sort((a, b) => a.name.localeCompare(b.name))) {
    const missing = missingForOperation(d);
    if (missing.length || !d.nodeType || !d.bmcUrl || !d.credentialRef) {
      problems.push(`${d.name}: no ${missing.join(', ')}`);
      continue;
    }
    const t = bmcTarget(d, d.nodeType, d.bmcUrl, d.credentialRef);
    const role = roleOfNodeType(d.nodeType);
    if (role === 'power_shelf') targets.shelves.push(t);
    else if (role === 'switch') {
      targets.switches.push(t);
      // A cold reboot asks NVUE on the switch trays whose NVOS the inventory can reach.
      const nvos = nvosTarget(d);
      if (!Array.isArray(nvos)) (targets.switchNvos ??= []).push(nvos);
    } else targets.compute.push(t);
  }
  return problems.length ? problems : targets;
}

export function rackPowerInput(job: Job, targets: RackTargets, power: AgentConfig['power']): RackPowerInput {
  return {
    jobId: job.id,
    rackId: job.rackId!,
    op: RackPowerOp.parse(job.params['op']),
    targets,
    settleTimeoutS: power.settleTimeoutS,
    activity: activityOf(power),
  };
}

export function coldRebootInput(job: Job, targets: RackTargets, power: AgentConfig['power']): ColdRebootInput {
  return {
    jobId: job.id,
    rackId: job.rackId!,
    targets,
    timings: coldRebootTimings((job.params['timings'] ?? {}) as Record<string, number>),
    settleTimeoutS: power.settleTimeoutS,
    activity: activityOf(power),
  };
}

/** The device as a BMC target, or what the inventory lacks to make it one. */
export function deviceTarget(device: Device): BmcTarget | string[] {
  const missing = missingForOperation(device);
  if (missing.length || !device.nodeType || !device.bmcUrl || !device.credentialRef) return missing;
  return bmcTarget(device, device.nodeType, device.bmcUrl, device.credentialRef);
}

/** The target of an operable device; its Redfish system only when the inventory names one. */
function bmcTarget(device: Device, nodeType: string, bmcUrl: string, credentialRef: string): BmcTarget {
  return {
    deviceId: device.id,
    nodeType,
    bmcUrl,
    credentialRef,
    ...(device.redfishSystemId ? { redfishSystemId: device.redfishSystemId } : {}),
  };
}

export function bmcResetInput(job: Job, target: BmcTarget, power: AgentConfig['power']): DeviceBmcResetInput {
  return {
    jobId: job.id,
    target,
    manager: (job.params['manager'] ?? 'bmc') as ManagerKind,
    waitUntilBackS: power.settleTimeoutS,
    activity: activityOf(power),
  };
}

export function powerRefreshInput(job: Job, target: BmcTarget, power: AgentConfig['power']): DevicePowerRefreshInput {
  return { jobId: job.id, target, activity: activityOf(power) };
}

function firmwareTimings(fw: AgentConfig['firmware']): FirmwareTimings {
  const { maxSwitchShareOfRack: _share, campaignHistoryBudget: _budget, ...timings } = fw;
  return timings;
}

/** One device's update: its manifest resolved to package digests; the device must report every component named. */
export function firmwareUpdateInput(
  job: Job,
  target: BmcTarget,
  role: NodeRole,
  manifest: ResolvedManifest,
  config: AgentConfig,
): DeviceFirmwareUpdateInput {
  return {
    jobId: job.id,
    target,
    role,
    steps: manifest.steps,
    expectedInventory: manifest.expectedInventory,
    force: job.params['force'] === true,
    timings: firmwareTimings(config.firmware),
    activity: activityOf(config.power),
  };
}

export function firmwareCampaignInput(
  job: Job,
  campaign: Campaign,
  devices: CampaignDeviceInput[],
  manifests: Map<string, ResolvedManifest>,
  windows: MaintenanceWindowSpec[],
  config: AgentConfig,
): FirmwareCampaignInput {
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
    // Devices the inventory can no longer operate are dropped from the waves (their jobs fail at start).
    waves: campaign.plan.waves.map((w) => ({ ...w, deviceIds: w.deviceIds.filter((id) => wanted.has(id)) })),
    windows,
    timings: firmwareTimings(config.firmware),
    switchTimings: defaultSwitchFirmwareTimings,
    activity: activityOf(config.power),
  };
}

/** The device's NVOS side as a satellite target, or what the inventory lacks to make it one. */
export function nvosTarget(device: Device): NvosTarget | string[] {
  const missing = missingForNvos(device);
  const ssh = device.nvosSsh ? parseHostPort(device.nvosSsh) : undefined;
  const credentialRef = device.nvosCredentialRef ?? device.credentialRef;
  if (missing.length || !device.nvosUrl || !ssh || !credentialRef) return missing;
  return {
    deviceId: device.id,
    nvueUrl: device.nvosUrl,
    ssh,
    credentialRef,
    ...(device.credentialRef ? { bmcCredentialRef: device.credentialRef } : {}),
    ...(device.nvosHostKey ? { hostKeyFingerprint: device.nvosHostKey } : {}),
  };
}

/** One switch's NVOS install: the image by digest and the build its name carries. */
export function nvosInstallInput(
  job: Job,
  target: NvosTarget,
  image: FirmwarePackage,
  buildId: string,
  config: AgentConfig,
): SwitchNvosInstallInput {
  return {
    jobId: job.id,
    target,
    image: { digest: image.digest, size: image.sizeBytes, fileName: image.fileName, buildId },
    timings: config.nvos,
    activity: activityOf(config.power),
  };
}

/** The switch operations beside NVOS install: each takes the switch's NVOS target, nothing secret. */
export function switchOperationInput(job: Job, target: NvosTarget, config: AgentConfig, manifest?: ResolvedManifest) {
  const base = { jobId: job.id, target, activity: activityOf(config.power) };
  switch (job.kind) {
    case 'switch.password_rotation':
      return base satisfies SwitchPasswordRotationInput;
    case 'switch.factory_reset':
      return { ...base, timings: defaultSwitchRebootTimings } satisfies SwitchFactoryResetInput;
    case 'switch.certificate_install':
      return { ...base, domain: String(job.params['domain']) } satisfies SwitchCertificateInstallInput;
    default:
      return {
        ...base,
        steps: (manifest?.steps ?? []) as SwitchFirmwareStep[],
        force: job.params['force'] === true,
        timings: defaultSwitchFirmwareTimings,
      } satisfies SwitchFirmwareUpdateInput;
  }
}

import type { Role } from './auth.js';

/**
 * What a job kind acts on: one device, a rack's devices (a parent with one child per device), a selection of devices
 * (a parent whose children are device jobs), or a site's campaign plan.
 */
export type JobScope = 'device' | 'rack' | 'selection' | 'campaign';

/**
 * The guard that keeps two jobs off the same hardware: `device` (the partial unique index jobs_one_active_per_device,
 * one active job per device), `rack` (jobs_one_active_rack_sequence, one rack sequence per rack) or `none` for a
 * parent whose children carry the device guard.
 */
export type JobGuard = 'device' | 'rack' | 'none';

export interface JobKindSpec {
  /** The Temporal workflow type; never rename one (it is stored in histories). Null: the children do the work. */
  workflowType: string | null;
  /** The least role that may request it. */
  role: Role;
  scope: JobScope;
  guard: JobGuard;
  /** Destroys state on the device (the API asks for a typed confirmation). */
  destructive: boolean;
  summary: string;
}

/**
 * The job-kind registry: the one place a job kind is declared. The hub takes the role and guard from it, the workflow
 * agent the workflow type (its input loaders are keyed by the same kinds), and JobKind is derived from its keys.
 */
export const jobKindTable = {
  'device.power': {
    workflowType: 'devicePower',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: 'Power a device on, off or through a cycle and confirm the state it reaches',
  },
  'device.bmc_reset': {
    workflowType: 'deviceBmcReset',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Reset a device's BMC (or HMC) and wait until it answers again",
  },
  'device.power_refresh': {
    workflowType: 'devicePowerRefresh',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Read a device's power state from its BMC into the projection",
  },
  'batch.power': {
    workflowType: null,
    role: 'operator',
    scope: 'selection',
    guard: 'none',
    destructive: false,
    summary: 'Power a selection of devices; each device is a device.power child job',
  },
  'rack.power': {
    workflowType: 'rackPower',
    role: 'operator',
    scope: 'rack',
    guard: 'rack',
    destructive: false,
    summary: "Power a rack's devices in order (shelves, switches, compute; reversed for off)",
  },
  'rack.cold_reboot': {
    workflowType: 'rackColdReboot',
    role: 'operator',
    scope: 'rack',
    guard: 'rack',
    destructive: false,
    summary: 'The cold-reboot runbook: compute down, shelves off and on, switches ready, compute up',
  },
  'device.firmware_update': {
    workflowType: 'deviceFirmwareUpdateV2',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Apply a firmware manifest to a device's components over Redfish",
  },
  'device.firmware_refresh': {
    workflowType: 'deviceFirmwareRefresh',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Read a device's firmware inventory into the projection",
  },
  'firmware.campaign': {
    workflowType: 'firmwareCampaign',
    role: 'operator',
    scope: 'campaign',
    guard: 'none',
    destructive: false,
    summary: 'Roll firmware manifests out over a site in waves, within maintenance windows and failure budgets',
  },
  'switch.nvos_install': {
    workflowType: 'switchNvosInstall',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: 'Install an NVOS image on a switch tray and boot into it',
  },
  'switch.password_rotation': {
    workflowType: 'switchPasswordRotation',
    role: 'admin',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Rotate a switch's NVOS password into the site's secret store",
  },
  'switch.factory_reset': {
    workflowType: 'switchFactoryReset',
    role: 'admin',
    scope: 'device',
    guard: 'device',
    destructive: true,
    summary: 'Reset NVOS to factory defaults',
  },
  'switch.firmware_update': {
    workflowType: 'switchFirmwareUpdate',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Update a switch tray's platform components (BMC, EROT, ...) through NVOS",
  },
  'switch.certificate_install': {
    workflowType: 'switchCertificateInstall',
    role: 'admin',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Install the site's switch mTLS material and bind the NVUE API to it",
  },
  'bmc.password_rotation': {
    workflowType: 'bmcPasswordRotation',
    // Admin, as the NVOS rotation: a wrong rotation locks the fleet out of a BMC, and it writes the site's secrets.
    role: 'admin',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Rotate a device's BMC account password into the site's secret store, rolled back if it fails its login",
  },
  'rack.bmc_password_rotation': {
    workflowType: 'rackBmcPasswordRotation',
    role: 'admin',
    scope: 'rack',
    // The children (bmc.password_rotation) carry the device guard; another rack job may run beside it.
    guard: 'none',
    destructive: false,
    summary: "Rotate the BMC passwords of a rack's devices, a few at a time; each device's outcome is its child job",
  },
  'rack.enrol': {
    workflowType: 'enrolment',
    role: 'operator',
    scope: 'rack',
    guard: 'rack',
    destructive: false,
    summary:
      'Enrol an NVL72 rack as a unit: BMCs, credentials, inventory, profile, NVLink topology, firmware baseline, ' +
      'burn-in, certified; a failed stage waits for a decision',
  },
  'device.quarantine': {
    workflowType: 'remediation',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: 'Hold a device (quarantined): nothing but remediation may act on it until it is released',
  },
  'device.remediate': {
    workflowType: 'remediation',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Hold a device and run its fault's playbook, each step verified; exhausted, it opens an RMA case",
  },
  'device.release': {
    workflowType: 'remediation',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: 'Let a held device go after a health check, back to where it was before the quarantine',
  },
  'device.rma_ship': {
    workflowType: 'remediation',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "An RMA case's device leaves for the vendor (rma)",
  },
  'device.rma_return': {
    workflowType: 'remediation',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "An RMA case's device is back from the vendor: discovered, to be enrolled again",
  },
  'device.enrol': {
    workflowType: 'enrolment',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: 'Enrol one device: the rack enrolment without the NVLink topology check',
  },
  'device.burn_in': {
    workflowType: 'enrolment',
    role: 'operator',
    scope: 'device',
    guard: 'device',
    destructive: false,
    summary: "Burn a compute tray in on the site's SLURM (enrolled or certified), certified when every test passes",
  },
} as const satisfies Record<string, JobKindSpec>;

export type JobKind = keyof typeof jobKindTable;
export const jobKinds = Object.keys(jobKindTable) as [JobKind, ...JobKind[]];

/** The kinds that start a workflow of their own, with its type. */
export type WorkflowJobKind = {
  [K in JobKind]: (typeof jobKindTable)[K]['workflowType'] extends string ? K : never;
}[JobKind];

export function jobKindSpec(kind: JobKind): JobKindSpec {
  return jobKindTable[kind];
}

/**
 * Quarantine and remediation (docs/day2.md): the rules that quarantine a device on what the observer saw, the
 * playbooks that try to fix it, and the blast-radius limit on what automation may touch. Playbooks and rules are data:
 * the defaults here, overridden per node type in the hub's config. Dependency-free (no zod) so workflow code may use
 * it.
 */
import type { BurnInTest } from './burn-in.js';
import type { ActivityTimeouts, BmcTarget, ManagerKind } from './contracts.js';
import type { FirmwareStep, FirmwareTimings } from './firmware.js';
import type { FaultClass, HealthFault, HealthReading } from './health.js';
import type { FleetLifecycleState } from './lifecycle.js';
import type { NodeRole } from './hardware.js';

/**
 * What a playbook step does to the device; each is verified by a fresh health reading before the next. `ac_cycle`
 * takes AC away through the rack's power shelves and back, `firmware_reflash` writes the versions of the device's
 * manifest again, `burn_in` runs the enrolment's tests on the tray: the check that must pass before a cleared fault
 * counts as fixed.
 */
export const playbookSteps = [
  'bmc_reset',
  'hmc_reset',
  'power_cycle',
  'ac_cycle',
  'firmware_reflash',
  'burn_in',
] as const;
export type PlaybookStep = (typeof playbookSteps)[number];

/** Steps that need the host's OS (SLURM): only a compute tray can take them. */
export const computeOnlySteps: readonly PlaybookStep[] = ['burn_in'];

export interface Playbook {
  /** The steps in order: the first that leaves the device without the fault ends the playbook. */
  steps: PlaybookStep[];
}

/**
 * The default playbooks per node role and fault class. A class without a playbook is quarantined and escalated to an
 * RMA draft at once (a leak, a PSU that failed, refused credentials are for people, not for resets).
 */
export const defaultPlaybooks: Record<NodeRole, Partial<Record<FaultClass, Playbook>>> = {
  compute: {
    unreachable: { steps: ['bmc_reset', 'power_cycle', 'ac_cycle'] },
    gpu: { steps: ['hmc_reset', 'power_cycle', 'ac_cycle', 'firmware_reflash', 'burn_in'] },
    thermal: { steps: ['power_cycle'] },
    chassis: { steps: ['bmc_reset', 'power_cycle', 'ac_cycle'] },
  },
  switch: {
    unreachable: { steps: ['bmc_reset', 'power_cycle', 'ac_cycle'] },
    thermal: { steps: ['power_cycle'] },
    chassis: { steps: ['bmc_reset'] },
  },
  power_shelf: {
    unreachable: { steps: ['bmc_reset'] },
  },
};

/**
 * A quarantine rule: a fault of one of `faultClasses` seen in `observations` readings in a row, the first and the last
 * at most `withinS` apart, quarantines the device (and remediates it when `remediate`). One reading never does unless
 * a rule says `observations: 1` (a leak).
 */
export interface QuarantineRule {
  name: string;
  faultClasses: FaultClass[];
  observations: number;
  withinS: number;
  remediate: boolean;
}

export const defaultQuarantineRules: QuarantineRule[] = [
  { name: 'bmc-unreachable', faultClasses: ['unreachable'], observations: 3, withinS: 600, remediate: true },
  { name: 'gpu-fault', faultClasses: ['gpu'], observations: 2, withinS: 600, remediate: true },
  { name: 'leak', faultClasses: ['leak'], observations: 1, withinS: 3600, remediate: false },
  { name: 'psu-fault', faultClasses: ['psu'], observations: 2, withinS: 600, remediate: true },
  { name: 'thermal', faultClasses: ['thermal', 'chassis'], observations: 3, withinS: 900, remediate: true },
  { name: 'credentials', faultClasses: ['credentials'], observations: 3, withinS: 900, remediate: false },
];

/**
 * The most automatic remediation may act on per site: at most `maxDevices` devices in any `windowS`, and never
 * devices of more than `maxRacks` racks in that window. Beyond it a quarantine still happens (it only holds the device)
 * but the remediation waits for an operator's approval, and says why.
 */
export interface BlastRadius {
  maxDevices: number;
  maxRacks: number;
  windowS: number;
}
export const defaultBlastRadius: BlastRadius = { maxDevices: 5, maxRacks: 1, windowS: 3600 };

/** The rule a device's reading matches, given how many readings in a row said so and over how long. */
export function matchingRule(
  rules: readonly QuarantineRule[],
  reading: HealthReading,
  observations: number,
  spanS: number,
): { rule: QuarantineRule; fault: HealthFault } | undefined {
  for (const rule of rules) {
    const fault = reading.faults.find((f) => rule.faultClasses.includes(f.class));
    if (fault && observations >= rule.observations && spanS <= rule.withinS) return { rule, fault };
  }
  return undefined;
}

/** Why the automatic remediation of one more device would exceed the blast radius, or undefined if it would not. */
export function blastRadiusExceeded(
  limit: BlastRadius,
  recent: { deviceId: string; rackId: string | null }[],
  next: { deviceId: string; rackId: string | null },
  siteId: string,
): string | undefined {
  const devices = new Set(recent.map((r) => r.deviceId));
  if (devices.has(next.deviceId)) return undefined;
  if (devices.size >= limit.maxDevices)
    return (
      `blast radius: ${devices.size} devices of site ${siteId} already remediated automatically in the last ` +
      `${limit.windowS} s (limit ${limit.maxDevices}); an operator must approve more`
    );
  const racks = new Set(recent.map((r) => r.rackId ?? `device:${r.deviceId}`));
  const rack = next.rackId ?? `device:${next.deviceId}`;
  if (!racks.has(rack) && racks.size >= limit.maxRacks)
    return (
      `blast radius: automatic remediation at site ${siteId} already acts on ${racks.size} rack(s) in the last ` +
      `${limit.windowS} s (limit ${limit.maxRacks}); an operator must approve another rack`
    );
  return undefined;
}

/**
 * What a remediation job does: hold the device, fix it with a playbook, let it go, or move it for an RMA case (away to
 * the vendor; back from it, to start again as discovered).
 */
export type RemediationMode = 'quarantine' | 'remediate' | 'release' | 'rma_ship' | 'rma_return';

export interface RemediationInput {
  jobId: string;
  mode: RemediationMode;
  target: BmcTarget;
  /** NetBox's name, for messages. */
  deviceName: string;
  /** Why (the operator's words, or the rule and what it saw). */
  reason: string;
  /** The rule that acted, for an automatic job. */
  rule?: string;
  /** The fault the playbook is for, and its steps. */
  fault?: HealthFault;
  playbook?: Playbook;
  /** Set when the blast radius is exceeded: the playbook waits for an operator's approval, for this reason. */
  awaitApproval?: string;
  /** The RMA case an rma_ship or rma_return job moves the device for. */
  rmaCaseId?: string;
  /** Where a release or a successful remediation returns the device: where it was when it was quarantined. */
  returnTo: FleetLifecycleState;
  /** The device is quarantined already (an operator's remediation of a held device): no quarantine move. */
  alreadyQuarantined: boolean;
  /** The site, for the firmware reflash's child workflow's search attributes. */
  siteId?: string;
  /** How `ac_cycle` reaches the device (absent from jobs made before the step existed). */
  acCycle?: AcCyclePlan;
  /** What `firmware_reflash` writes: the device's manifest, absent when its node type has none (the step skips). */
  firmware?: ReflashPlan;
  /** What `burn_in` runs: the enrolment's tray tests, absent when the device is no compute tray (the step skips). */
  burnIn?: RemediationBurnIn;
  /** Seconds a step's fix gets to show in the device's health before the next step. */
  verifyTimeoutS: number;
  /** Seconds between health reads while verifying. */
  verifyPollS: number;
  activity: ActivityTimeouts;
}

/**
 * The power shelves that feed the device and the other devices on the same feed. An NVL72 rack's shelves feed its
 * whole busbar (powerDomainOf), so taking AC from one tray takes it from every tray and switch of the rack: the step
 * runs only when each of `others` is held (left out here by the loader) or found Off when the step starts.
 */
export interface AcCyclePlan {
  shelves: BmcTarget[];
  /** Devices the shelves also feed that are not held: each must be Off, else the step is refused. */
  others: { target: BmcTarget; name: string }[];
  /** Why the step cannot run at all (no shelf feeds the device, a shelf has no usable inventory). */
  refused?: string;
  /** Seconds AC stays off at least once the tray went dark (capacitors drain), and seconds to poll. */
  offFloorS: number;
  pollIntervalS: number;
}

/** The device's firmware manifest as a device firmware update runs it. */
export interface ReflashPlan {
  manifestId: string;
  role: NodeRole;
  steps: FirmwareStep[];
  expectedInventory: string[];
  timings: FirmwareTimings;
}

export interface RemediationBurnIn {
  /** The tray's name for SLURM. */
  name: string;
  tests: BurnInTest[];
  startToCloseS: number;
  heartbeatTimeoutS: number;
  /** Seconds the host gets to reach On before the tests. */
  settleTimeoutS: number;
}

/** What a step did and what the device's health said after it. */
export interface StepOutcome {
  step: PlaybookStep;
  fixed: boolean;
  /** The faults still there after it (empty when fixed); for a skipped step, those seen last. */
  faults: HealthFault[];
  message?: string;
  /** The step did not act (refused, or nothing to do for this device): no health check followed it. */
  skipped?: boolean;
}

export interface RemediationResult {
  deviceId: string;
  mode: RemediationMode;
  /** The device's lifecycle state when the job ended. */
  state: FleetLifecycleState;
  steps: StepOutcome[];
  /** The step that fixed it. */
  fixedBy?: PlaybookStep;
  /** The playbook ran out (or there was none for the fault): an RMA case was drafted. */
  escalated?: { part: string; faultClass: FaultClass; message: string };
}

/** The manager a reset step reboots. */
export const stepManager: Partial<Record<PlaybookStep, ManagerKind>> = { bmc_reset: 'bmc', hmc_reset: 'hmc' };

export interface RemediationActivities {
  /**
   * Reads the device's health until healthCleared says so or `timeoutS` passes; answers with the last reading, never
   * throws for a device that is still faulty.
   */
  awaitHealthy(input: {
    target: BmcTarget;
    /** Absent: no critical fault of any class (a release's check). */
    faultClass?: FaultClass;
    timeoutS: number;
    pollS: number;
  }): Promise<HealthReading>;
}

/**
 * Enrolment and burn-in (docs/enrolment.md): the stages a rack or a device walks from `discovered` to `certified`, the
 * operator's decision when a stage fails, and what the workflow publishes for the workflow agent to project (the
 * lifecycle moves, the conditions its probes and tests observed, the hardware it read). Dependency-free (no zod) so
 * workflow code may use it.
 */
import type { ActivityTimeouts, BmcTarget } from './contracts.js';
import type { BurnInTest } from './burn-in.js';
import type { AxisWriter } from './conditions.js';
import type { FirmwareStep, FirmwareTimings } from './firmware.js';
import type { NodeKind, NodeRole } from './hardware.js';
import type { HardwareInventoryReading, InventoryIdentity } from './hardware-inventory.js';
import type { ProfileDifference } from './hardware-profiles.js';
import type { FleetLifecycleState } from './lifecycle.js';
import type { TopologyIssue } from './nvlink-topology.js';

/** The stages, in order. A device enrolment has no topology stage; a burn-in job has only burn_in and certified. */
export const enrolmentStages = [
  'bmc_reachable',
  'credentials_verified',
  'inventory_read',
  'profile_check',
  'nvlink_topology',
  'firmware_baseline',
  'burn_in',
  'certified',
] as const;
export type EnrolmentStage = (typeof enrolmentStages)[number];

/** The stages one device's verification activity runs (verifyDevice), in order. */
export const verificationStages = ['bmc_reachable', 'credentials_verified', 'inventory_read', 'profile_check'] as const;
export type VerificationStage = (typeof verificationStages)[number];

export type EnrolmentMode = 'rack' | 'device' | 'burn_in';

/** What an operator may answer a failed stage: run it again, pass it anyway (admin only), or give the devices up. */
export const decisionActions = ['retry', 'skip', 'reject', 'approve'] as const;
/** What a wait takes when it names no actions of its own (an enrolment stage). */
export const defaultDecisionActions: readonly DecisionAction[] = ['retry', 'skip', 'reject'];
export type DecisionAction = (typeof decisionActions)[number];

export interface EnrolmentDecision {
  action: DecisionAction;
  /** The stage it answers (the job's progress.decision.stage); a decision for another stage is dropped. */
  stage: EnrolmentStage;
  /**
   * The wait it answers (progress.decision.since): a decision sent twice, or late, is dropped instead of answering the
   * next failure of the same stage. Absent: any wait at `stage`.
   */
  since?: string;
  /** Required: kept in the job's timeline and the devices' history. */
  reason: string;
  /** The waiting devices it applies to; all of them when absent. */
  deviceIds?: string[];
  /** Who decided (the API caller). */
  by: string;
}

/** The signal the workflow agent delivers a decision with (an intent's payload: { signal, args: [decision] }). */
export const decisionSignalName = 'decision';

/** A stage that failed for some devices and waits for a decision; shown in the job's progress. */
export interface AwaitedDecision {
  /** An enrolment stage, or a remediation's wait for approval beyond the blast radius. */
  stage: EnrolmentStage | 'blast_radius';
  /** Device id → why the stage failed for it. */
  devices: Record<string, string>;
  since: string;
  /** The actions this wait takes; defaultDecisionActions when absent. */
  actions?: DecisionAction[];
}

export interface EnrolmentDevice {
  target: BmcTarget;
  /** NetBox's name; in messages. */
  name: string;
  kind: NodeKind;
  /** The tray as the site's burn-in knows it (the SLURM node, or the simulator's BMC id). */
  burnInName: string;
  /** NetBox's serial for the device, if it has one: the hardware must report it. */
  netboxSerial?: string;
  /** The default manifest of the device's node type, or none (the baseline is skipped for it). */
  firmware?: { manifestId: string; role: NodeRole; steps: FirmwareStep[]; expectedInventory: string[] };
}

export interface EnrolmentInput {
  jobId: string;
  siteId: string;
  rackId?: string;
  mode: EnrolmentMode;
  devices: EnrolmentDevice[];
  burnIn: {
    tests: BurnInTest[];
    /** One burn-in activity may run this long (SLURM queue plus every test). */
    startToCloseS: number;
    heartbeatTimeoutS: number;
  };
  firmware: FirmwareTimings;
  /** Seconds a compute tray's host gets to reach On before burn-in. */
  settleTimeoutS: number;
  activity: ActivityTimeouts;
}

/** A device's verification: each stage's outcome and times, the conditions observed, and the hardware read. */
export interface DeviceVerification {
  deviceId: string;
  /** Per stage that ran: passed or not, why not, and its span on the activity's clock. */
  stages: { stage: VerificationStage; passed: boolean; message?: string; startedAt: string; finishedAt: string }[];
  /** The hardware as read (parsed fields and digest), when the read got that far. */
  hardware?: HardwareRecord;
}

export interface VerificationActivities {
  /**
   * The device's BMC answers, the credential reference logs in, the hardware inventory is read and checked against the
   * node type's profile (NetBox's serial pinned). Never throws for a device that fails a check: that is its result.
   */
  verifyDevice(input: { target: BmcTarget; netboxSerial?: string }): Promise<DeviceVerification>;
  /** Reads the NVLink ports of the rack's compute and switch trays and checks that the cabling closes. */
  checkRackTopology(input: { targets: BmcTarget[] }): Promise<TopologyVerdict>;
}

/** The topology check as the workflow sees it: the report's figures, its first issues, by device where named. */
export interface TopologyVerdict {
  complete: boolean;
  links: number;
  expectedLinks: number;
  /** At most 50 (issuesTotal says how many there were); a missing tray's links cut to five. */
  issues: (TopologyIssue & { deviceId?: string })[];
  issuesTotal: number;
}

/** A part as the hub keeps it: enough to name a swapped GPU. */
export interface HardwarePart {
  id: string;
  kind: string;
  model?: string;
  partNumber?: string;
  serialNumber?: string;
}

/**
 * What Fleet keeps of a device's Redfish inventory: the identity, the summaries, the main parts, the profile's
 * differences, and where the full document is (its digest). Small: it travels in the workflow memo.
 */
export interface HardwareRecord extends Omit<InventoryIdentity, 'uri' | 'status'> {
  readAt: string;
  document: HardwareInventoryReading['document'];
  cpuCount?: number;
  gpuCount?: number;
  memoryGiB?: number;
  gpuMemoryGiB?: number;
  parts: HardwarePart[];
  nics: number;
  firmwareComponents: number;
  nvlinkPorts: number;
  /** The rack chassis serial and slot the tray reports (MNNVLink topology). */
  location?: { rack?: string; slot?: number };
  differences: ProfileDifference[];
}

/** The conditions an enrolment or burn-in reports, and which writer it reports each as (conditionTable's owner). */
export const enrolmentConditions = ['BMCReachable', 'CredentialsVerified', 'BurnInPassed'] as const;
export type EnrolmentCondition = (typeof enrolmentConditions)[number];

/**
 * Who observed each condition an enrolment reports: the satellite's probe of the BMC, the burn-in's verdicts. The agent
 * writes them as these writers, and the repository refuses any that does not own the condition's axis.
 */
export const enrolmentConditionWriters = {
  BMCReachable: 'satellite',
  CredentialsVerified: 'satellite',
  BurnInPassed: 'burn-in-workflow',
} as const satisfies Record<EnrolmentCondition, AxisWriter>;

export interface ReportedCondition {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

export interface LifecycleMove {
  to: FleetLifecycleState;
  reason: string;
  message?: string;
}

/** One device in the lifecycle memo. */
export interface DeviceLifecycleReport {
  /**
   * The lifecycle moves this job made, in order, each with why (CamelCase) and, for people, what it was. The agent
   * applies those the device's history does not yet hold from this job.
   */
  moves: LifecycleMove[];
  conditions: Partial<Record<EnrolmentCondition, ReportedCondition>>;
}

/**
 * The workflow memo key of what a lifecycle workflow reports besides its JobMemo; `rev` grows with every change to it
 * or to the hardware key, so the agent applies each change once.
 */
export const lifecycleMemoKey = 'fleet_lifecycle';
export interface LifecycleMemo {
  rev: number;
  devices: Record<string, DeviceLifecycleReport>;
}

/** The memo key of the hardware records (device id → HardwareRecord): set when read, apart from the rest. */
export const hardwareMemoKey = 'fleet_hardware';

/** What an enrolment or burn-in job ends with. */
export interface EnrolmentResult {
  devices: number;
  certified: number;
  enrolled: number;
  rejected: number;
  /** Device id → the state it ended in. */
  states: Record<string, FleetLifecycleState>;
  /** Stages passed by an admin's skip: device id → stage → reason. */
  skipped: Record<string, Record<string, string>>;
}

/** Which states an enrolment starts from, and a burn-in: the lifecycle table's `enrol`, `start_burn_in`, `retest`. */
export const enrolFrom: readonly FleetLifecycleState[] = ['discovered', 'failed'];
export const burnInFrom: readonly FleetLifecycleState[] = ['enrolled', 'certified'];

/** The stages a mode runs (a device enrolment has no rack to check the cabling of). */
export function stagesOf(mode: EnrolmentMode): EnrolmentStage[] {
  if (mode === 'burn_in') return ['burn_in', 'certified'];
  return enrolmentStages.filter((s) => mode === 'rack' || s !== 'nvlink_topology');
}

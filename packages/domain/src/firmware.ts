import { z } from 'zod';
import type { ActivityTimeouts, BmcTarget } from './contracts.js';
import type { NodeRole } from './hardware.js';
import type { NvosTarget } from './switch.js';
import type { SwitchFirmwareTimings } from './switch-ops.js';

/**
 * RMS FirmwareUpdateError names (docs/reference/rms-behaviours.md#firmware-error-codes), plus Fleet's outcomes that RMS
 * has no code for.
 */
export const firmwareResultCodes = [
  'SUCCESS',
  'FILE_NOT_FOUND',
  'CLIENT_FAILURE',
  'TARGET_NOT_FOUND',
  'SERVER_ERROR',
  'TASK_FAILED',
  'NO_TASK_INFO',
  'EXCEPTION',
  'INVALID_RESPONSE',
  'MONITORING_TIMEOUT',
  'TASK_EXCEPTION',
  'UNKNOWN',
  'UPDATE_IN_PROGRESS',
  // Fleet: already at the target version (not pushed); expected inventory missing; activation
  // did not bring the device back; installed version differs from the target after activation.
  'SKIPPED_COMPLIANT',
  'PRECONDITION_FAILED',
  'ACTIVATION_FAILED',
  'VERIFICATION_FAILED',
  'CANCELLED',
] as const;
export type FirmwareResultCode = (typeof firmwareResultCodes)[number];

/** One component's version, as a manifest wants it or a device reports it. */
export interface ComponentVersion {
  id: string;
  version: string;
}

/** One package push of a manifest, in order (BMC tray before compute tray). */
export interface ManifestStep {
  name: string;
  packageId: string;
  /** Redfish Targets; [] = whole package. */
  targets: string[];
  /** Component versions the device runs once this step is activated. */
  components: ComponentVersion[];
}

/** A manifest step resolved for a satellite: the package by digest, never its bytes. */
export interface FirmwareStep extends Omit<ManifestStep, 'packageId'> {
  packageDigest: string;
  packageSize: number;
  fileName: string;
}

/** Catalog formats: PLDM firmware packages (DSP0267 .fwpkg) and NVOS switch images. */
export const packageFormats = ['pldm', 'nvos'] as const;
export type PackageFormat = (typeof packageFormats)[number];

/** What the catalog keeps of a parsed PLDM package. */
export interface PldmPackageMetadata {
  headerRevision: string;
  headerUuid: string;
  releaseDateTime: string | null;
  devices: { descriptors: { type: number; data: string }[]; applicableComponents: number[]; imageSetVersion: string }[];
  components: {
    index: number;
    identifier: number;
    classification: number;
    comparisonStamp: number;
    version: string;
    offset: number;
    size: number;
    sha256: string;
  }[];
}

/** An NVOS image: opaque bytes whose file name carries the build id it installs. */
export interface NvosImageMetadata {
  format: 'nvos';
  buildId: string;
}

/** What the catalog keeps of a package (PLDM metadata predates the `format` key). */
export type FirmwarePackageMetadata = PldmPackageMetadata | NvosImageMetadata;

export function isNvosImage(m: FirmwarePackageMetadata): m is NvosImageMetadata {
  return 'format' in m && m.format === 'nvos';
}

/**
 * RMS timings for a firmware update (docs/reference/rms-behaviours.md#firmware-timings), in seconds; tests and benches
 * scale them down.
 */
export interface FirmwareTimings {
  /** Task poll interval (RMS: 5 s). */
  taskPollS: number;
  /** Redfish task budget (nvfwupd: 900 s). */
  taskTimeoutS: number;
  /** UPDATE_DELAY: pause between two pushes to the same BMC (nvfwupd example: 30 s). */
  pushDelayS: number;
  /** Compute activation: Off and On must be seen within this (12 × 5 s). */
  powerStateTimeoutS: number;
  /** Compute activation: stabilisation after the AC cycle (3 min). */
  acStabilizeS: number;
  /** BMC back after an AC cycle or reset (power shelf: 90 × 15 s). */
  bmcRecoveryS: number;
}

export const defaultFirmwareTimings: FirmwareTimings = {
  taskPollS: 5,
  taskTimeoutS: 900,
  pushDelayS: 30,
  powerStateTimeoutS: 60,
  acStabilizeS: 180,
  bmcRecoveryS: 1350,
};

export interface DeviceFirmwareUpdateInput {
  jobId: string;
  target: BmcTarget;
  role: NodeRole;
  steps: FirmwareStep[];
  /** Push even when the device already runs the target versions (and allow downgrades). */
  force: boolean;
  /** Component ids the device must report before anything is pushed (RMS expected inventory). */
  expectedInventory: string[];
  timings: FirmwareTimings;
  activity: ActivityTimeouts;
}

export interface ComponentResult {
  id: string;
  from: string | null;
  to: string;
  /** What the device reported after activation (null if it was never read). */
  installed: string | null;
  status: 'updated' | 'skipped' | 'failed' | 'cancelled';
  code: FirmwareResultCode;
  message?: string;
}

export interface DeviceFirmwareResult {
  deviceId: string;
  status: 'updated' | 'skipped' | 'failed';
  components: ComponentResult[];
  /** Installed versions read at the end, for the compliance view. */
  inventory: ComponentVersion[];
}

// ---- Activities (satellite implements, workflows see types only) ----

export interface FirmwareInventoryReading {
  deviceId: string;
  components: ComponentVersion[];
}

export interface PushFirmwareInput {
  jobId: string;
  target: BmcTarget;
  step: FirmwareStep;
  /** Index of the step in the job: part of the name sent to the BMC, so a retry can find its own task. */
  stepIndex: number;
  /** Bumped when a push must be made again (its task was lost): the BMC sees a new file name. */
  generation: number;
  force: boolean;
}

export interface PushFirmwareOutcome {
  taskUri: string;
  /** True when an earlier attempt's upload was found on the BMC and adopted instead of pushing again. */
  adopted: boolean;
  fileName: string;
}

export interface AwaitFirmwareTaskInput {
  target: BmcTarget;
  taskUri: string;
  pollIntervalS: number;
  timeoutS: number;
}

export type FirmwareTaskOutcome =
  | { state: 'completed'; messages: string[] }
  | { state: 'failed'; code: FirmwareResultCode; message: string }
  /** The BMC rebooted and the task is gone (power shelves hand off this way). */
  | { state: 'lost'; message: string };

/** One step for applyFirmware: what to push and which versions show it took effect without activation. */
export interface ApplyFirmwareStep {
  index: number;
  step: FirmwareStep;
  /** Target versions of the components this device still has to change. */
  components: { id: string; to: string }[];
}

export interface ApplyFirmwareInput {
  jobId: string;
  target: BmcTarget;
  role: NodeRole;
  steps: ApplyFirmwareStep[];
  force: boolean;
  timings: FirmwareTimings;
  /** The activity's retry limit (0: unlimited): the last attempt records a step's failure instead of retrying. */
  maximumAttempts: number;
}

/** How one step ended: staged for activation, already running (it activated itself), or failed with an RMS code. */
export interface AppliedStep {
  index: number;
  outcome: 'staged' | 'self_activated' | 'failed';
  code?: FirmwareResultCode;
  message?: string;
  /** Pushes made for it (a task the BMC lost is pushed again under a new name). */
  pushes: number;
}

export interface StageSpan {
  startedAt: string;
  finishedAt: string;
}

/** applyFirmware's answer: steps stop at the first failed one. Spans come from the activity's clock. */
export interface ApplyFirmwareResult {
  steps: AppliedStep[];
  fetch: StageSpan;
  update: StageSpan;
}

export interface ActivateFirmwareInput {
  target: BmcTarget;
  role: NodeRole;
  timings: FirmwareTimings;
  maximumAttempts: number;
}

/** Activation done, and what the device runs afterwards (the verification's reading). */
export interface ActivateFirmwareResult {
  activate: StageSpan;
  inventory: ComponentVersion[];
}

export { firmwareCodeFor } from './firmware-codes.js';

export interface FirmwareActivities {
  /**
   * Every step of one device (fetch, push, task monitoring, UPDATE_DELAY between pushes) as one heartbeating
   * activity: its heartbeat details carry the finished steps and the running push's task URI, so a retried
   * attempt resumes where the last one stopped and never pushes a package the BMC already accepted.
   */
  applyFirmware(input: ApplyFirmwareInput): Promise<ApplyFirmwareResult>;
  /**
   * Activation per node kind, then the inventory read that verifies it, as one heartbeating activity whose
   * details carry the phase (and whether the host was on), so a retry neither powers off nor resets twice.
   */
  activateFirmware(input: ActivateFirmwareInput): Promise<ActivateFirmwareResult>;
  /** Downloads the package into the site cache (by digest, resumable, verified); no-op when cached. */
  fetchArtifact(input: { digest: string; size: number }): Promise<{ path: string; fetchedBytes: number }>;
  readFirmwareInventory(input: { target: BmcTarget }): Promise<FirmwareInventoryReading>;
  /** Pushes one step's package, unless an earlier attempt's upload is already on the BMC. */
  pushFirmware(input: PushFirmwareInput): Promise<PushFirmwareOutcome>;
  awaitFirmwareTask(input: AwaitFirmwareTaskInput): Promise<FirmwareTaskOutcome>;
}

// ---- Campaigns ----

export const CampaignPolicy = z
  .object({
    /** Devices updated first, alone; the campaign then waits for approval (unless autoApprove). */
    canarySize: z.number().int().min(0).max(100).default(1),
    autoApprove: z.boolean().default(false),
    /** Devices per wave after the canary. */
    waveSize: z.number().int().min(1).max(10_000).default(50),
    maxConcurrentPerSite: z.number().int().min(1).max(10_000).default(100),
    maxConcurrentPerRack: z.number().int().min(1).max(72).default(18),
    maxConcurrentPerPowerDomain: z.number().int().min(1).max(10_000).default(36),
    /** Failures (since the last resume) that pause the campaign. */
    failureBudget: z.number().int().min(0).max(10_000).default(2),
    force: z.boolean().default(false),
  })
  .strict();
export type CampaignPolicy = z.infer<typeof CampaignPolicy>;

export interface PlannedDevice {
  deviceId: string;
  name: string;
  /** The child job (and device workflow) id. */
  jobId: string;
  rackId: string | null;
  powerDomain: string;
  nodeType: string;
  manifestId: string;
  /** Components whose known installed version differs from the manifest (all, when unknown). */
  components: { id: string; from: string | null; to: string }[];
}

export interface CampaignWave {
  index: number;
  kind: 'canary' | 'wave';
  deviceIds: string[];
}

export interface CampaignPlan {
  devices: PlannedDevice[];
  waves: CampaignWave[];
  /** Devices left out (already compliant, or not operable), with the reason. */
  excluded: { deviceId: string; name: string; reason: string }[];
  estimatedDurationS: number;
}

export type CampaignSignal = 'pause' | 'resume' | 'approve';

export interface MaintenanceWindowSpec {
  weekdays: number[];
  startMinute: number;
  durationMinutes: number;
}

/** A campaign device as its workflow needs it: where it is (for the caps) and how to reach it. */
export interface CampaignDeviceInput extends Pick<
  PlannedDevice,
  'deviceId' | 'jobId' | 'rackId' | 'powerDomain' | 'nodeType' | 'manifestId'
> {
  target: BmcTarget;
  role: NodeRole;
  /** A switch tray whose manifest names NVUE platform components is updated over NVOS, not its BMC. */
  nvos?: NvosTarget;
}

export type CampaignDeviceOutcome = 'succeeded' | 'skipped' | 'failed';

/** What a campaign carries across continue-as-new and publishes while it runs. */
export interface CampaignProgress {
  waveIndex: number;
  outcomes: Record<string, CampaignDeviceOutcome>;
  failuresSinceResume: number;
  approved: boolean;
  paused: boolean;
  pauseReason?: string;
}

export interface FirmwareCampaignInput {
  jobId: string;
  siteId: string;
  policy: CampaignPolicy;
  /** Switch-share cap comes with the switch issue; the rest mirrors the policy. */
  maxSwitchShareOfRack?: number;
  devices: CampaignDeviceInput[];
  /** Resolved manifests by id: steps with package digests, and the expected inventory. */
  manifests: Record<string, { steps: FirmwareStep[]; expectedInventory: string[] }>;
  waves: CampaignWave[];
  windows: MaintenanceWindowSpec[];
  timings: FirmwareTimings;
  /** Timings of switch trays updated over NVOS. */
  switchTimings: SwitchFirmwareTimings;
  activity: ActivityTimeouts;
  /** History events after which the campaign continues as new (T4: far below 10,240). */
  historyBudget: number;
  carried?: CampaignProgress;
}

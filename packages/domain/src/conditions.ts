/**
 * A device's status axes, the one writer of each, and its Kubernetes-style conditions (docs/lifecycle.md). A writer is
 * a write path (an integration or a role a workflow plays), not a process: the burn-in workflow writes the `burnin`
 * axis as `burn-in-workflow` and moves the lifecycle as `lifecycle-workflow`. Dependency-free (no zod) so workflow
 * code may use it.
 */

export const deviceAxes = ['inventory', 'power', 'health', 'firmware', 'burnin', 'lifecycle'] as const;
export type DeviceAxis = (typeof deviceAxes)[number];

export const axisWriters = [
  'netbox-agent',
  'satellite',
  'firmware-refresh',
  'burn-in-workflow',
  'lifecycle-workflow',
] as const;
export type AxisWriter = (typeof axisWriters)[number];

export interface AxisSpec {
  /** The only writer of the axis. */
  writer: AxisWriter;
  holds: string;
}

/** The axis table: each axis has exactly one writer (a record, so it cannot hold two). */
export const axisTable = {
  inventory: {
    writer: 'netbox-agent',
    holds: "NetBox's record of the device, including its NetBox status (devices.lifecycle_state)",
  },
  power: { writer: 'satellite', holds: 'The power state the BMC reports (devices.power_state)' },
  health: { writer: 'satellite', holds: 'Whether the BMC answers and accepts the device credentials' },
  firmware: { writer: 'firmware-refresh', holds: 'Installed firmware against the manifest (compliance)' },
  burnin: { writer: 'burn-in-workflow', holds: 'The verdict of the last burn-in' },
  lifecycle: { writer: 'lifecycle-workflow', holds: "Fleet's own lifecycle (devices.fleet_lifecycle)" },
} as const satisfies Record<DeviceAxis, AxisSpec>;

export function axisWriter(axis: DeviceAxis): AxisWriter {
  return axisTable[axis].writer;
}

/** The axes a writer owns (a satellite owns two). */
export function axesOf(writer: AxisWriter): DeviceAxis[] {
  return deviceAxes.filter((a) => axisTable[a].writer === writer);
}

export function isDeviceAxis(value: string): value is DeviceAxis {
  return (deviceAxes as readonly string[]).includes(value);
}

export function isAxisWriter(value: string): value is AxisWriter {
  return (axisWriters as readonly string[]).includes(value);
}

/** Thrown when a writer tries to write an axis (or a condition on an axis) it does not own. */
export class AxisWriterRefused extends Error {
  /** Never a client's fault: a component wrote what it does not own. */
  readonly code = 'PERMISSION_DENIED' as const;
  constructor(
    readonly axis: DeviceAxis,
    readonly writer: string,
    readonly owner: AxisWriter,
  ) {
    super(`${writer} may not write the ${axis} axis: its only writer is ${owner}`);
    this.name = 'AxisWriterRefused';
  }
}

/** Throws AxisWriterRefused unless `writer` owns `axis`. */
export function assertAxisWriter(axis: DeviceAxis, writer: string): void {
  const owner = axisWriter(axis);
  if (writer !== owner) throw new AxisWriterRefused(axis, writer, owner);
}

export const conditionTypes = [
  'BMCReachable',
  'CredentialsVerified',
  'InventoryMatchesProfile',
  'FirmwareCompliant',
  'BurnInPassed',
  'Schedulable',
  'Healthy',
] as const;
export type ConditionType = (typeof conditionTypes)[number];

/** Each condition belongs to one axis, and so has that axis's one writer. */
export const conditionTable = {
  BMCReachable: { axis: 'health', meaning: "The device's BMC answers Redfish" },
  CredentialsVerified: { axis: 'health', meaning: "The device's credential reference logs in to its BMC" },
  InventoryMatchesProfile: {
    axis: 'inventory',
    meaning: "NetBox's record resolves to a node type of the hardware table with a usable BMC address",
  },
  FirmwareCompliant: { axis: 'firmware', meaning: 'Every component runs the version its manifest names' },
  BurnInPassed: { axis: 'burnin', meaning: 'The last burn-in ran every test and all passed' },
  Schedulable: { axis: 'lifecycle', meaning: 'The device may be given work (in service and not held)' },
  Healthy: {
    axis: 'health',
    meaning: "The satellite's last observation found no fault (the reason names the worst fault class otherwise)",
  },
} as const satisfies Record<ConditionType, { axis: DeviceAxis; meaning: string }>;

export function conditionWriter(type: ConditionType): AxisWriter {
  return axisWriter(conditionTable[type].axis);
}

export function isConditionType(value: string): value is ConditionType {
  return (conditionTypes as readonly string[]).includes(value);
}

export const conditionStatuses = ['True', 'False', 'Unknown'] as const;
export type ConditionStatus = (typeof conditionStatuses)[number];

/** Kubernetes metav1.Condition, per device. */
export interface DeviceCondition {
  type: ConditionType;
  status: ConditionStatus;
  /** CamelCase, machine-readable: why the status is what it is. */
  reason: string;
  /** For people; may be empty. */
  message: string;
  /** When status last changed; a new reason or message alone does not move it. */
  lastTransitionTime: Date;
  /** The generation of the input the writer judged; a write older than the stored one is ignored. */
  observedGeneration: number;
}

/** What a writer reports; the time of the transition is decided by applyCondition. */
export type ConditionReport = Omit<DeviceCondition, 'lastTransitionTime'>;

/**
 * CamelCase: a capital letter then letters and digits. Stricter than Kubernetes' pattern (which also allows `_`, `,`
 * and `:`) so reasons read alike everywhere; the database checks the same pattern.
 */
export const reasonPattern = /^[A-Z][A-Za-z0-9]*$/;
export const reasonPatternSql = '^[A-Z][A-Za-z0-9]*$';
/** Kubernetes' limits for reason and message. */
export const conditionLimits = { reason: 1024, message: 32768 } as const;

export function isReason(value: string): boolean {
  return value.length <= conditionLimits.reason && reasonPattern.test(value);
}

/** What is wrong with a report, or undefined when it is valid. */
export function conditionReportProblem(report: {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration: number;
}): string | undefined {
  if (!isConditionType(report.type)) return `unknown condition type ${report.type}`;
  if (!(conditionStatuses as readonly string[]).includes(report.status))
    return `status must be True, False or Unknown, not ${report.status}`;
  if (!isReason(report.reason)) return `reason must be CamelCase (${reasonPattern.source}), not ${report.reason}`;
  if (report.message.length > conditionLimits.message)
    return `message is longer than ${conditionLimits.message} characters`;
  if (!Number.isSafeInteger(report.observedGeneration) || report.observedGeneration < 0)
    return `observedGeneration must be a non-negative integer`;
  return undefined;
}

/** Thrown when a writer's report is malformed (conditionReportProblem says how). */
export class ConditionReportInvalid extends Error {
  readonly code = 'INVALID_ARGUMENT' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ConditionReportInvalid';
  }
}

export interface ConditionUpdate {
  condition: DeviceCondition;
  /** The status changed (or the condition is new): a transition to record. */
  transitioned: boolean;
  /** The report judged an older generation than the stored condition: nothing changed. */
  stale: boolean;
}

/**
 * Kubernetes' meta.SetStatusCondition: reason, message and observedGeneration always follow the report, and
 * lastTransitionTime moves to `now` only when the status changes (or the condition is new). A report older than the
 * stored condition (lower observedGeneration) leaves it as it is.
 */
export function applyCondition(
  previous: DeviceCondition | undefined,
  report: ConditionReport,
  now: Date,
): ConditionUpdate {
  if (previous && previous.type !== report.type) throw new Error(`${report.type} cannot replace ${previous.type}`);
  if (!previous) return { condition: { ...report, lastTransitionTime: now }, transitioned: true, stale: false };
  if (report.observedGeneration < previous.observedGeneration)
    return { condition: previous, transitioned: false, stale: true };
  const transitioned = report.status !== previous.status;
  const lastTransitionTime = transitioned ? now : previous.lastTransitionTime;
  return { condition: { ...report, lastTransitionTime }, transitioned, stale: false };
}

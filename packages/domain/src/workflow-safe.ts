/**
 * The part of the domain that workflow code may import at run time: constants and
 * pure functions with no dependency at all (no zod), so the workflow bundle stays small.
 * Types come from the package root with `import type`.
 */
export { siteTaskQueue, workflowTypeFor, searchAttributes } from './naming.js';
export const jobMemoKey = 'fleet';

/** The stages of ExecuteColdReboot, in order, with RMS's names (docs/reference/rms-behaviours.md#cold-reboot). */
export const coldRebootStages = [
  'prestage_shutdown_compute',
  'prestage_verify_compute_down',
  'power_off_shelves',
  'verify_discharged',
  'power_on_shelves',
  'verify_bmc_up',
  'verify_nvos_ready',
  'power_on_compute',
  'wait_compute_boot',
] as const;

/** Rack power stages: classes in power-on order, reversed for power-off. */
export const rackPowerClasses = ['shelves', 'switches', 'compute'] as const;

export { nvosHelloLimits, nvosHelloWaits } from './nvos-hello.js';
export { buildWaves, startable, switchCounts, maintenanceWindowAt } from './campaign-schedule.js';
export {
  fleetLifecycleStates,
  lifecycleTable,
  nextLifecycleStates,
  lifecycleRule,
  transition,
  isFleetLifecycleState,
  LifecycleTransitionRefused,
} from './lifecycle.js';
export {
  axisTable,
  axisWriter,
  assertAxisWriter,
  AxisWriterRefused,
  conditionTable,
  conditionWriter,
  conditionReportProblem,
  applyCondition,
} from './conditions.js';
export { firmwareCodeFor } from './firmware-codes.js';
export {
  enrolmentStages,
  verificationStages,
  stagesOf,
  lifecycleMemoKey,
  hardwareMemoKey,
  decisionSignalName,
} from './enrolment.js';
export { burnInPassed } from './burn-in.js';
export { healthCleared, observerMemoKey, observerSettingsSignalName } from './health.js';

export * from './errors.js';
export * from './power.js';
export * from './auth.js';
export * from './jobs.js';
export {
  jobKindTable,
  jobKindSpec,
  type JobKindSpec,
  type JobScope,
  type JobGuard,
  type WorkflowJobKind,
} from './job-kinds.js';
export * from './naming.js';
export * from './contracts.js';
export { jobMemoKey } from './workflow-safe.js';
export * from './hardware.js';
export * from './node-types.js';
export { NodeType } from './node-types.js';
export * from './operability.js';
export * from './rack.js';
export * from './nvos-hello.js';
export * from './firmware.js';
export * from './switch.js';
export * from './switch-ops.js';
export * from './credential-refs.js';
export * from './bmc-credentials.js';
export * from './campaign-schedule.js';
export * from './lifecycle.js';
export * from './conditions.js';
export * from './hardware-inventory.js';
export * from './hardware-profiles.js';
export * from './nvlink-topology.js';
export * from './burn-in.js';
export * from './enrolment.js';
export * from './health.js';
export * from './remediation.js';
export * from './sla.js';
export * from './holds.js';
export * from './rma.js';
export * from './facility.js';
export * from './sites.js';

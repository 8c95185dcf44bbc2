export * from './errors.js';
export * from './power.js';
export * from './auth.js';
export * from './jobs.js';
export * from './naming.js';
export * from './contracts.js';
export { jobMemoKey } from './workflow-safe.js';
export * from './node-types.js';
export * from './operability.js';

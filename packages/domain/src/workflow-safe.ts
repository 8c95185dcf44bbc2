/**
 * The part of the domain that workflow code may import at run time: constants and
 * pure functions with no dependency at all (no zod), so the workflow bundle stays small.
 * Types come from the package root with `import type`.
 */
export { siteTaskQueue, workflowTypeFor, searchAttributes } from './naming.js';
export const jobMemoKey = 'fleet';

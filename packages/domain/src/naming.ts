import { jobKindTable, type WorkflowJobKind } from './job-kinds.js';

/** Task queue of a site's satellite workers. The only place this name is built. */
export function siteTaskQueue(siteId: string): string {
  return `site-${siteId}`;
}

/** Temporal workflow type per job kind that starts one, from the job-kind registry. */
export const workflowTypeFor = Object.fromEntries(
  Object.entries(jobKindTable).flatMap(([kind, spec]) => (spec.workflowType ? [[kind, spec.workflowType]] : [])),
) as { [K in WorkflowJobKind]: (typeof jobKindTable)[K]['workflowType'] };

/** Custom search attributes the project registers on its Temporal namespace. */
export const searchAttributes = {
  jobKind: { name: 'FleetJobKind', type: 'Keyword' },
  siteId: { name: 'FleetSiteId', type: 'Keyword' },
  deviceId: { name: 'FleetDeviceId', type: 'Keyword' },
} as const;

/**
 * A site ID becomes part of a Temporal task queue, a workflow ID and a NetBox slug, so it is a lower-case DNS
 * label: 1–63 characters of a–z, 0–9 and '-', starting and ending with a letter or digit.
 */
export const SITE_ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const SITE_ID_RULE =
  "a lower-case DNS label: 1-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit";
export function isSiteId(value: string): boolean {
  return SITE_ID_PATTERN.test(value);
}

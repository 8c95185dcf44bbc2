import { searchAttributes } from '@fleet/domain/workflow-safe';

/**
 * A device child workflow's search attributes, so the Temporal UI and the agent find it like a job of that kind.
 * Children do not inherit their parent's; this is the untyped form (the typed one needs @temporalio/common).
 */
export function childSearchAttributes(jobKind: string, siteId: string, deviceId: string): Record<string, string[]> {
  return {
    [searchAttributes.jobKind.name]: [jobKind],
    [searchAttributes.siteId.name]: [siteId],
    [searchAttributes.deviceId.name]: [deviceId],
  };
}

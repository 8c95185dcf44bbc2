import type { components } from './generated/api.js';

export {
  createFleetClient,
  createUncheckedClient,
  octetStream,
  type FleetClient,
  type FleetClientOptions,
} from './client.js';
export { ApiError, unwrap, type ErrorBody, type ErrorDetail } from './errors.js';
export type { components, operations, paths } from './generated/api.js';

/** The hub's named schemas (components.schemas in its OpenAPI document), one alias each. */
type Schemas = components['schemas'];
export type Approval = Schemas['Approval'];
export type Campaign = Schemas['Campaign'];
export type CampaignDevice = Schemas['CampaignDevice'];
export type CampaignPlan = Schemas['CampaignPlan'];
export type Device = Schemas['Device'];
export type DeviceDetail = Schemas['DeviceDetail'];
export type FirmwareManifest = Schemas['FirmwareManifest'];
export type FirmwarePackage = Schemas['FirmwarePackage'];
export type InventoryIssue = Schemas['InventoryIssue'];
export type Job = Schemas['Job'];

/** An answer a two-person rule may hold (docs/security.md): the job, or the approval it waits for. */
export function isApproval(answer: Job | Approval): answer is Approval {
  return 'job_kind' in answer;
}

/** What a held request tells its sender. */
export function heldText(a: Approval): string {
  return (
    `Held for a second person under the two-person rule ${a.rule}: approval ${a.id}, until ${a.expires_at}. ` +
    `Another person with the role approves it (POST /v1/approvals/${a.id}/approve) or rejects it.`
  );
}
export type MaintenanceWindows = Schemas['MaintenanceWindows'];
export type Rack = Schemas['Rack'];
export type RackDetail = Schemas['RackDetail'];
export type Site = Schemas['Site'];
export type SiteSummary = Schemas['SiteSummary'];
export type SyncState = Schemas['SyncState'];

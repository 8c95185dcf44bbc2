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
export type Campaign = Schemas['Campaign'];
export type CampaignDevice = Schemas['CampaignDevice'];
export type CampaignPlan = Schemas['CampaignPlan'];
export type Device = Schemas['Device'];
export type DeviceDetail = Schemas['DeviceDetail'];
export type FirmwareManifest = Schemas['FirmwareManifest'];
export type FirmwarePackage = Schemas['FirmwarePackage'];
export type InventoryIssue = Schemas['InventoryIssue'];
export type Job = Schemas['Job'];
export type MaintenanceWindows = Schemas['MaintenanceWindows'];
export type Rack = Schemas['Rack'];
export type RackDetail = Schemas['RackDetail'];
export type Site = Schemas['Site'];
export type SiteSummary = Schemas['SiteSummary'];
export type SyncState = Schemas['SyncState'];

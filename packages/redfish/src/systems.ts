import type { PowerState, RedfishResetType } from '@fleet/domain';
import type { RedfishClient } from './client.js';
import { RedfishError } from './errors.js';

interface Link {
  '@odata.id': string;
}
interface ServiceRoot {
  Systems?: Link;
}
interface Collection {
  Members?: Link[];
}
export interface ComputerSystem {
  '@odata.id': string;
  Id: string;
  PowerState?: PowerState;
  Actions?: { '#ComputerSystem.Reset'?: { target?: string; 'ResetType@Redfish.AllowableValues'?: string[] } };
}

/**
 * The host system of a tray, found by following links from the service root
 * (System_0 on NVIDIA trays, but nothing here assumes the path).
 */
export async function findSystem(client: RedfishClient, systemId = 'System_0'): Promise<ComputerSystem> {
  const root = await client.get<ServiceRoot>('/redfish/v1');
  const systemsUri = root.Systems?.['@odata.id'];
  if (!systemsUri) throw new RedfishError('FailedPrecondition', client.bmc, '/redfish/v1', 'service root has no Systems link');
  const members = [...new Set(((await client.get<Collection>(systemsUri)).Members ?? []).map((m) => m['@odata.id']))];
  const uri = members.find((m) => m.endsWith(`/${systemId}`)) ?? members[0];
  if (!uri) throw new RedfishError('NotFound', client.bmc, systemsUri, 'Systems collection is empty');
  return client.get<ComputerSystem>(uri);
}

export async function getPowerState(client: RedfishClient): Promise<PowerState> {
  return (await findSystem(client)).PowerState ?? 'Unknown';
}

/** POSTs ComputerSystem.Reset to the target the system itself advertises. */
export async function resetSystem(client: RedfishClient, resetType: RedfishResetType): Promise<void> {
  const system = await findSystem(client);
  const action = system.Actions?.['#ComputerSystem.Reset'];
  if (!action?.target) {
    throw new RedfishError('FailedPrecondition', client.bmc, system['@odata.id'], 'system advertises no ComputerSystem.Reset action');
  }
  const allowed = action['ResetType@Redfish.AllowableValues'];
  if (allowed && !allowed.includes(resetType)) {
    throw new RedfishError('InvalidArgument', client.bmc, action.target, `ResetType ${resetType} not allowed (allowed: ${allowed.join(', ')})`);
  }
  await client.post(action.target, { ResetType: resetType });
}

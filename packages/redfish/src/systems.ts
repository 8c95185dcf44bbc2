import { resetTypeFor, type PowerAction, type PowerState, type RedfishResetType } from '@fleet/domain';
import type { RedfishClient } from './client.js';
import { findMember, readCollection, rootLink } from './discovery.js';
import { RedfishError } from './errors.js';

export interface ComputerSystem {
  '@odata.id': string;
  Id: string;
  PowerState?: PowerState;
  Processors?: { '@odata.id': string };
  Actions?: { '#ComputerSystem.Reset'?: { target?: string; 'ResetType@Redfish.AllowableValues'?: string[] } };
}

/** The host system on NVIDIA trays; any other Id can be asked for. */
export const defaultSystemId = 'System_0';

/** URI of the system `systemId` (or the only/first system when none has that Id), found from the service root. */
export function systemUri(client: RedfishClient, systemId = defaultSystemId): Promise<string> {
  return client.link(`system:${systemId}`, async () => {
    const systems = await rootLink(client, 'Systems');
    const uri = (await findMember(client, systems, systemId)) ?? (await readCollection(client, systems)).members[0];
    if (!uri) throw new RedfishError('NotFound', client.bmc, systems, 'Systems collection is empty');
    return uri;
  });
}

/** The system resource, read fresh (only its URI is cached). */
export function findSystem(client: RedfishClient, systemId = defaultSystemId): Promise<ComputerSystem> {
  return client.discovered(async () => client.get<ComputerSystem>(await systemUri(client, systemId)));
}

export async function getPowerState(client: RedfishClient, systemId = defaultSystemId): Promise<PowerState> {
  return (await findSystem(client, systemId)).PowerState ?? 'Unknown';
}

/** POSTs ComputerSystem.Reset to the target the system itself advertises. */
export async function resetSystem(client: RedfishClient, resetType: RedfishResetType, systemId = defaultSystemId): Promise<void> {
  await client.discovered(async () => {
    const system = await client.get<ComputerSystem>(await systemUri(client, systemId));
    const action = system.Actions?.['#ComputerSystem.Reset'];
    if (!action?.target) {
      throw new RedfishError('FailedPrecondition', client.bmc, system['@odata.id'], 'system advertises no ComputerSystem.Reset action');
    }
    const allowed = action['ResetType@Redfish.AllowableValues'];
    if (allowed && !allowed.includes(resetType)) {
      throw new RedfishError('InvalidArgument', client.bmc, action.target, `ResetType ${resetType} not allowed (allowed: ${allowed.join(', ')})`);
    }
    await client.post(action.target, { ResetType: resetType });
  });
}

/** A fleet power action through RMS's ResetType mapping ("off" is a graceful shutdown). */
export function applyPowerAction(client: RedfishClient, action: PowerAction, systemId = defaultSystemId): Promise<void> {
  return resetSystem(client, resetTypeFor[action], systemId);
}

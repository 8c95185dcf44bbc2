import { powerStates, type PowerState, type RedfishResetType } from '@fleet/domain';
import { findMember, RedfishError, serviceRootUri, type Link, type RedfishClient } from '@fleet/redfish';

interface Chassis {
  '@odata.id': string;
  PowerState?: string;
  Actions?: { '#Chassis.Reset'?: { target?: string; 'ResetType@Redfish.AllowableValues'?: string[] } };
}

/**
 * URI of member `id` of a collection named in the service root, found by discovery and
 * cached until the client is invalidated. (@fleet/redfish has this for Systems and
 * Managers but exports neither helper nor a Chassis.Reset; see chassisPowerState.)
 */
export function memberUri(client: RedfishClient, collection: 'Chassis' | 'Managers', id: string): Promise<string> {
  return client.link(`drivers:${collection}:${id}`, async () => {
    const link = (await client.root())[collection] as Link | undefined;
    const uri = link?.['@odata.id']?.replace(/(.)\/$/, '$1');
    if (!uri) throw new RedfishError('FailedPrecondition', client.bmc, serviceRootUri, `service root has no ${collection} link`);
    const found = await findMember(client, uri, id);
    if (!found) throw new RedfishError('NotFound', client.bmc, uri, `no ${collection} member ${id}`);
    return found;
  });
}

const knownStates: readonly string[] = powerStates;

/** PowerState of a chassis (a power shelf's output), read fresh. */
export function chassisPowerState(client: RedfishClient, chassisId: string): Promise<PowerState> {
  return client.discovered(async () => {
    const state = (await client.get<Chassis>(await memberUri(client, 'Chassis', chassisId))).PowerState;
    return state !== undefined && knownStates.includes(state) ? (state as PowerState) : 'Unknown';
  });
}

/** POSTs Chassis.Reset to the target the chassis advertises, checking its allowed ResetTypes first. */
export function resetChassis(client: RedfishClient, chassisId: string, resetType: RedfishResetType): Promise<void> {
  return client.discovered(async () => {
    const chassis = await client.get<Chassis>(await memberUri(client, 'Chassis', chassisId));
    const action = chassis.Actions?.['#Chassis.Reset'];
    if (!action?.target) throw new RedfishError('FailedPrecondition', client.bmc, chassis['@odata.id'], 'chassis advertises no Chassis.Reset action');
    const allowed = action['ResetType@Redfish.AllowableValues'];
    if (allowed && !allowed.includes(resetType)) {
      throw new RedfishError('InvalidArgument', client.bmc, action.target, `ResetType ${resetType} not allowed (allowed: ${allowed.join(', ')})`);
    }
    await client.post(action.target, { ResetType: resetType });
  });
}

/** Reads a manager resource; succeeds only if the controller answers. */
export function readManager(client: RedfishClient, managerId: string): Promise<unknown> {
  return client.discovered(async () => client.get<unknown>(await memberUri(client, 'Managers', managerId)));
}

import { powerStates, resetTypeFor, type PowerAction, type PowerState, type RedfishResetType } from '@fleet/domain';
import { postReset } from './actions.js';
import type { RedfishClient } from './client.js';
import { memberWithId, readCollection, rootLink } from './discovery.js';
import { RedfishError } from './errors.js';

export interface ComputerSystem {
  '@odata.id': string;
  Id: string;
  PowerState?: PowerState;
  Processors?: { '@odata.id': string };
  Actions?: Record<string, unknown>;
}

/**
 * Systems that are never a device's host: NVIDIA trays list the HGX GPU baseboard beside the
 * host (System_0 and HGX_Baseboard_0 on GB200 and GH200), so it does not make a tray ambiguous.
 */
const auxiliarySystem = /\/HGX_Baseboard_\d+$/;

const idOf = (uri: string) => uri.slice(uri.lastIndexOf('/') + 1);

/** The BMC cannot say which of its systems is the device: the one named is missing, or several and none named. */
export class SystemSelectionError extends RedfishError {
  constructor(
    client: RedfishClient,
    collectionUri: string,
    /** The system the device names, if it names one. */
    readonly requested: string | undefined,
    /** Every member of the Systems collection. */
    readonly members: readonly string[],
  ) {
    const listed = members.length ? members.map(idOf).join(', ') : 'none';
    const device = client.device ? `device ${client.device}: ` : '';
    super(
      requested === undefined && members.length > 0 ? 'FailedPrecondition' : 'NotFound',
      client.bmc,
      collectionUri,
      requested !== undefined
        ? `${device}no system ${requested} (the BMC lists: ${listed})`
        : members.length
          ? `${device}the BMC has several systems (${listed}) and the device names none; set its Redfish ` +
            `system id (NetBox custom field fleet_redfish_system_id)`
          : `${device}Systems collection is empty`,
    );
    this.name = 'SystemSelectionError';
  }
}

/**
 * URI of the device's system, found from the service root and cached: the system `systemId`
 * when the device names one (it must exist), else the BMC's only host system. A BMC with
 * several (a bladed enclosure) and none named is refused, never answered with its first.
 */
export function systemUri(client: RedfishClient, systemId?: string): Promise<string> {
  return client.link(`system:${systemId ?? ''}`, async () => {
    const systems = await rootLink(client, 'Systems');
    const { members } = await readCollection(client, systems);
    if (systemId !== undefined) {
      const found = await memberWithId(client, members, systemId);
      if (!found) throw new SystemSelectionError(client, systems, systemId, members);
      return found;
    }
    const hosts = members.filter((m) => !auxiliarySystem.test(m));
    if (hosts.length !== 1) throw new SystemSelectionError(client, systems, undefined, members);
    return hosts[0]!;
  });
}

/** The system resource, read fresh (only its URI is cached). */
export function findSystem(client: RedfishClient, systemId?: string): Promise<ComputerSystem> {
  return client.discovered(async () => client.get<ComputerSystem>(await systemUri(client, systemId)));
}

const knownStates: readonly unknown[] = powerStates;

/** The system's PowerState; 'Unknown' when the BMC gives none or one outside the schema's values. */
export async function getPowerState(client: RedfishClient, systemId?: string): Promise<PowerState> {
  const state = (await findSystem(client, systemId)).PowerState;
  return knownStates.includes(state) ? state! : 'Unknown';
}

/** POSTs ComputerSystem.Reset to the target the system advertises, if it allows `resetType`. */
export async function resetSystem(
  client: RedfishClient,
  resetType: RedfishResetType,
  systemId?: string,
): Promise<void> {
  await client.discovered(async () => {
    const uri = await systemUri(client, systemId);
    await postReset(client, await client.get<ComputerSystem>(uri), uri, '#ComputerSystem.Reset', resetType);
  });
}

/** A fleet power action through RMS's ResetType mapping ("off" is a graceful shutdown). */
export function applyPowerAction(client: RedfishClient, action: PowerAction, systemId?: string): Promise<void> {
  return resetSystem(client, resetTypeFor[action], systemId);
}

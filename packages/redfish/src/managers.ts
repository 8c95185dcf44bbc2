import type { RedfishClient } from './client.js';
import { findMember, rootLink } from './discovery.js';
import { RedfishError } from './errors.js';

/** The tray BMC and the HGX baseboard's management controller (HMC) on NVIDIA trays. */
export const managerIds = { bmc: 'BMC_0', hmc: 'HGX_BMC_0' } as const;
export type ManagerRole = keyof typeof managerIds;

export type ManagerResetType = 'GracefulRestart' | 'ForceRestart' | 'GracefulShutdown' | 'ForceOff' | 'ForceOn' | 'On' | 'PowerCycle';

interface Manager {
  '@odata.id': string;
  Actions?: {
    '#Manager.Reset'?: { target?: string; '@Redfish.ActionInfo'?: string; 'ResetType@Redfish.AllowableValues'?: string[] };
  };
}
interface ActionInfo {
  Parameters?: { Name?: string; AllowableValues?: string[] }[];
}

/**
 * Manager.Reset on the BMC or HMC, found through the Managers collection. The reset
 * restarts the Redfish service, so discovered links are dropped afterwards.
 */
export async function resetManager(
  client: RedfishClient,
  manager: ManagerRole | { id: string },
  resetType: ManagerResetType = 'GracefulRestart',
): Promise<void> {
  const id = typeof manager === 'string' ? managerIds[manager] : manager.id;
  await client.discovered(async () => {
    const managers = await rootLink(client, 'Managers');
    const uri = await client.link(`manager:${id}`, async () => {
      const found = await findMember(client, managers, id);
      if (!found) throw new RedfishError('NotFound', client.bmc, managers, `no manager ${id}`);
      return found;
    });
    const action = (await client.get<Manager>(uri)).Actions?.['#Manager.Reset'];
    if (!action?.target) throw new RedfishError('FailedPrecondition', client.bmc, uri, 'manager advertises no Manager.Reset action');
    const allowed = action['ResetType@Redfish.AllowableValues'] ?? (await allowedFromActionInfo(client, action['@Redfish.ActionInfo']));
    if (allowed && !allowed.includes(resetType)) {
      throw new RedfishError('InvalidArgument', client.bmc, action.target, `ResetType ${resetType} not allowed (allowed: ${allowed.join(', ')})`);
    }
    await client.post(action.target, { ResetType: resetType });
  });
  client.invalidate();
}

async function allowedFromActionInfo(client: RedfishClient, uri: string | undefined): Promise<string[] | undefined> {
  if (!uri) return undefined;
  const info = await client.get<ActionInfo>(uri);
  return info.Parameters?.find((p) => p.Name === 'ResetType')?.AllowableValues;
}

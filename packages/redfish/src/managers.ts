import { postReset } from './actions.js';
import type { RedfishClient } from './client.js';
import { memberUri } from './discovery.js';
import { RedfishError } from './errors.js';

/** The tray BMC and the HGX baseboard's management controller (HMC) on NVIDIA trays. */
export const managerIds = { bmc: 'BMC_0', hmc: 'HGX_BMC_0' } as const;
export type ManagerRole = keyof typeof managerIds;

export type ManagerResetType =
  'GracefulRestart' | 'ForceRestart' | 'GracefulShutdown' | 'ForceOff' | 'ForceOn' | 'On' | 'PowerCycle';

interface Manager {
  '@odata.id': string;
  Actions?: Record<string, unknown>;
}

/**
 * Manager.Reset on the BMC or HMC, found through the Managers collection. The reset
 * restarts the Redfish service, so discovered links are dropped afterwards.
 *
 * A controller whose Redfish service does not answer reads (a wedged web server: the reads time out or are reset)
 * cannot be discovered; the reset then goes straight to the action's conventional target,
 * `/redfish/v1/Managers/<id>/Actions/Manager.Reset` (the URI NVIDIA's BMCs advertise), which such a BMC may still
 * take: the one remedy for it short of an AC cycle (docs/day2.md).
 */
export async function resetManager(
  client: RedfishClient,
  manager: ManagerRole | { id: string },
  resetType: ManagerResetType = 'GracefulRestart',
): Promise<void> {
  const id = typeof manager === 'string' ? managerIds[manager] : manager.id;
  try {
    await client.discovered(async () => {
      const uri = await memberUri(client, 'Managers', id);
      await postReset(client, await client.get<Manager>(uri), uri, '#Manager.Reset', resetType);
    });
  } catch (err) {
    if (!(err instanceof RedfishError && err.retryable && err.status === undefined)) throw err;
    await client.post(`/redfish/v1/Managers/${id}/Actions/Manager.Reset`, { ResetType: resetType });
  }
  client.invalidate();
}

/** Reads a manager resource; succeeds only if the controller answers. */
export function readManager(client: RedfishClient, managerId: string): Promise<unknown> {
  return client.discovered(async () => client.get<unknown>(await memberUri(client, 'Managers', managerId)));
}

import type { RedfishResetType } from '@fleet/domain';
import { getPowerState, resetSystem } from '@fleet/redfish';
import type { PowerDomain } from './redfish-node.js';

/**
 * Host power of a tray through its ComputerSystem (docs/reference/rms-behaviours.md#tray-host-power): the system the
 * device names, else the BMC's only host system (System_0 on NVIDIA trays, beside the HGX baseboard).
 */
export function systemPower(systemId: string | undefined): PowerDomain {
  return {
    state: (client) => getPowerState(client, systemId),
    reset: (client, type) => resetSystem(client, type, systemId),
  };
}

export const systemResetTypes: readonly RedfishResetType[] = [
  'On',
  'ForceOn',
  'ForceOff',
  'GracefulShutdown',
  'GracefulRestart',
  'ForceRestart',
  'PowerCycle',
  'Nmi',
];

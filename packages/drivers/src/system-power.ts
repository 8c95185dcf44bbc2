import type { RedfishResetType } from '@fleet/domain';
import { getPowerState, resetSystem } from '@fleet/redfish';
import type { PowerDomain } from './redfish-node.js';

/** Host power of a tray: ComputerSystem System_0 (rms.md §4.1). */
export const systemPower: PowerDomain = {
  state: (client) => getPowerState(client),
  reset: (client, type) => resetSystem(client, type),
};

export const systemResetTypes: readonly RedfishResetType[] = ['On', 'ForceOn', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'PowerCycle', 'Nmi'];

import type { NodeType, PowerAction, RedfishResetType } from '@fleet/domain';
import { chassisPowerState, resetChassis } from '@fleet/redfish';
import { redfishNode } from './redfish-node.js';
import type { DriverContext, PowerShelfDriver } from './types.js';

/**
 * The chassis whose PowerState is the shelf's output and whose Chassis.Reset switches it
 * (docs/reference/rms-behaviours.md#power-shelves).
 */
export const powerShelfChassisId = 'powershelf';

/** What a shelf's Chassis.Reset accepts: output on, output cut, and a cut followed by restore. */
export const powerShelfResetTypes = ['On', 'ForceOff', 'PowerCycle'] as const satisfies readonly RedfishResetType[];

/**
 * A shelf has no host to shut down: "off" cuts its output (the trays it feeds must be shut
 * down first, as the cold reboot does) and a forced restart is a power cycle. The graceful
 * actions are refused rather than silently turned into a hard cut.
 */
export const powerShelfActions: Partial<Record<PowerAction, RedfishResetType>> = {
  on: 'On',
  'force-on': 'On',
  off: 'ForceOff',
  'force-off': 'ForceOff',
  'power-cycle': 'PowerCycle',
  'force-restart': 'PowerCycle',
};

/** LITE-ON and Delta NVL72 power shelves; the PMC (Manager BMC_0) stays up on standby power. */
export function createRedfishPowerShelf(nodeType: NodeType) {
  return (ctx: DriverContext): PowerShelfDriver =>
    redfishNode(
      {
        nodeType,
        kind: 'power_shelf',
        managers: ['bmc'] as const,
        resetTypes: powerShelfResetTypes,
        actions: powerShelfActions,
        power: {
          state: (client) => chassisPowerState(client, powerShelfChassisId),
          reset: (client, type) => resetChassis(client, powerShelfChassisId, type),
        },
        inventory: { chassis: powerShelfChassisId },
        health: { chassis: powerShelfChassisId },
      },
      ctx,
    );
}

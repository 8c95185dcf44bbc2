import { resetTypeFor, type NodeType } from '@fleet/domain';
import { trayHealth } from './health.js';
import { redfishNode } from './redfish-node.js';
import { systemPower, systemResetTypes } from './system-power.js';
import type { DriverContext, SwitchTrayDriver } from './types.js';

const switchResetTypes = systemResetTypes.filter((t) => t !== 'Nmi');

/**
 * NVLink switch trays through their BMC (RMS powers switches over Redfish): the System_0
 * mapping of compute trays, no NMI, BMC_0 only. NVOS readiness is NVUE's business.
 */
export function createRedfishSwitchTray(nodeType: NodeType) {
  return (ctx: DriverContext): SwitchTrayDriver =>
    redfishNode(
      {
        nodeType,
        kind: 'switch',
        managers: ['bmc'] as const,
        resetTypes: switchResetTypes,
        actions: resetTypeFor,
        power: systemPower(ctx.target.redfishSystemId),
        inventory: { system: ctx.target.redfishSystemId },
        health: trayHealth(ctx.target.redfishSystemId),
      },
      ctx,
    );
}

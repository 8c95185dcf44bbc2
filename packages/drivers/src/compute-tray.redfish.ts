import { resetTypeFor, type NodeType } from '@fleet/domain';
import { trayHealth } from './health.js';
import { redfishNode } from './redfish-node.js';
import { systemPower, systemResetTypes } from './system-power.js';
import type { ComputeTrayDriver, DriverContext } from './types.js';

/**
 * NVIDIA GB200/GB300/VR NVL72 compute trays: RMS's ResetType mapping ("off" is a graceful shutdown), BMC_0 and
 * HGX_BMC_0.
 */
export function createRedfishComputeTray(nodeType: NodeType) {
  return (ctx: DriverContext): ComputeTrayDriver =>
    redfishNode(
      {
        nodeType,
        kind: 'compute',
        managers: ['bmc', 'hmc'] as const,
        resetTypes: systemResetTypes,
        actions: resetTypeFor,
        power: systemPower(ctx.target.redfishSystemId),
        inventory: { system: ctx.target.redfishSystemId },
        health: trayHealth(ctx.target.redfishSystemId),
      },
      ctx,
    );
}

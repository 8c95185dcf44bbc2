import { nodeTypes, type NodeType } from '@fleet/domain';
import { createRedfishComputeTray } from './compute-tray.redfish.js';
import { UnsupportedNodeTypeError } from './errors.js';
import { createRedfishPowerShelf } from './power-shelf.redfish.js';
import { createRedfishSwitchTray } from './switch-tray.redfish.js';
import type { PowerDriverFactory } from './types.js';

/**
 * One driver per node type. A full Record: a NodeType added to @fleet/domain without an
 * entry here fails type-checking, so adding hardware means a driver and a line here.
 */
const drivers: Record<NodeType, PowerDriverFactory> = {
  compute_gb200_nvidia: createRedfishComputeTray('compute_gb200_nvidia'),
  compute_gb300_nvidia: createRedfishComputeTray('compute_gb300_nvidia'),
  compute_vrnvl72_nvidia: createRedfishComputeTray('compute_vrnvl72_nvidia'),
  switch_gb200_nvidia: createRedfishSwitchTray('switch_gb200_nvidia'),
  switch_gb300_nvidia: createRedfishSwitchTray('switch_gb300_nvidia'),
  switch_vrnvl72_nvidia: createRedfishSwitchTray('switch_vrnvl72_nvidia'),
  powershelf_gb200_liteon: createRedfishPowerShelf('powershelf_gb200_liteon'),
  powershelf_gb200_delta: createRedfishPowerShelf('powershelf_gb200_delta'),
  powershelf_gb300_liteon: createRedfishPowerShelf('powershelf_gb300_liteon'),
  powershelf_gb300_delta: createRedfishPowerShelf('powershelf_gb300_delta'),
};

const isNodeType = (t: string): t is NodeType => (nodeTypes as readonly string[]).includes(t);

export function driverFor(nodeType: string): PowerDriverFactory {
  if (!isNodeType(nodeType)) throw new UnsupportedNodeTypeError(nodeType);
  return drivers[nodeType];
}

export const supportedNodeTypes: readonly NodeType[] = Object.keys(drivers) as NodeType[];

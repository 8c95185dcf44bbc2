import { hardwareOf, type NodeKind, type NodeType } from '@fleet/domain';
import { createRedfishComputeTray } from './compute-tray.redfish.js';
import { UnsupportedNodeTypeError } from './errors.js';
import { createRedfishPowerShelf } from './power-shelf.redfish.js';
import { createRedfishSwitchTray } from './switch-tray.redfish.js';
import type { PowerDriverFactory } from './types.js';

/** The driver of each kind in the hardware table; a node type gets its kind's unless it has its own below. */
const driverOfKind: Record<NodeKind, (nodeType: NodeType) => PowerDriverFactory> = {
  compute: createRedfishComputeTray,
  switch: createRedfishSwitchTray,
  power_shelf: createRedfishPowerShelf,
};

/** Node types whose hardware differs from their kind's driver. None yet: add a row when one does. */
const driverOfNodeType: Partial<Record<NodeType, PowerDriverFactory>> = {};

export function driverFor(nodeType: string): PowerDriverFactory {
  const hardware = hardwareOf(nodeType);
  if (!hardware) throw new UnsupportedNodeTypeError(nodeType);
  return driverOfNodeType[hardware.nodeType] ?? driverOfKind[hardware.kind](hardware.nodeType);
}

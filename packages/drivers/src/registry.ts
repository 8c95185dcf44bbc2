import type { NodeType } from '@fleet/domain';
import { createRedfishComputeTray } from './compute-tray.redfish.js';
import { UnsupportedNodeTypeError, type PowerDriverFactory } from './types.js';

/** One driver per node type; adding hardware means adding an entry here and its driver. */
const powerDrivers: Partial<Record<NodeType, PowerDriverFactory>> = {
  compute_gb200_nvidia: createRedfishComputeTray('compute_gb200_nvidia'),
  compute_gb300_nvidia: createRedfishComputeTray('compute_gb300_nvidia'),
};

export function powerDriverFor(nodeType: string): PowerDriverFactory {
  const factory = powerDrivers[nodeType as NodeType];
  if (!factory) throw new UnsupportedNodeTypeError(nodeType);
  return factory;
}

export const supportedNodeTypes = Object.keys(powerDrivers);

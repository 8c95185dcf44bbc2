import { z } from 'zod';
import { kindOfNodeType, nodeTypes, type NodeRole, type NodeType as HardwareNodeType } from './hardware.js';

/** Node types as a zod enum, from the hardware table (hardware.ts). */
export const NodeType = z.enum(nodeTypes);
export type NodeType = HardwareNodeType;

/** A node type's role (its kind in the hardware table); a name the table does not hold is a programming error. */
export function roleOfNodeType(nodeType: string): NodeRole {
  const kind = kindOfNodeType(nodeType);
  if (!kind) throw new Error(`unknown node type ${JSON.stringify(nodeType)}; known: ${nodeTypes.join(', ')}`);
  return kind;
}

/** NetBox's device statuses; admins may add more, which sync keeps as-is. */
export const lifecycleStates = [
  'offline',
  'active',
  'planned',
  'staged',
  'failed',
  'inventory',
  'decommissioning',
] as const;

/**
 * A device's BMC endpoint from its management profile (NetBox custom field
 * `fleet_management_profile`): `redfish` = https on 443, `redfish-https:<port>`,
 * `redfish-http:<port>` (simulators, labs). Null for a profile we cannot read.
 */
export function bmcUrlFor(profile: string | null, ip: string): string | null {
  const m = (profile ?? 'redfish').match(/^redfish(?:-(https?)(?::(\d{1,5}))?)?$/);
  if (!m) return null;
  const scheme = m[1] ?? 'https';
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return `${scheme}://${host}${m[2] ? `:${m[2]}` : ''}`;
}

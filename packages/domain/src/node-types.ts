import { z } from 'zod';

/** Node types as in the RMS hardware compatibility list (docs/reference/rms-behaviours.md#racks-and-node-types). */
export const nodeTypes = [
  'compute_gb200_nvidia',
  'compute_gb300_nvidia',
  'compute_vrnvl72_nvidia',
  'switch_gb200_nvidia',
  'switch_gb300_nvidia',
  'switch_vrnvl72_nvidia',
  'powershelf_gb200_liteon',
  'powershelf_gb200_delta',
  'powershelf_gb300_liteon',
  'powershelf_gb300_delta',
] as const;
export const NodeType = z.enum(nodeTypes);
export type NodeType = z.infer<typeof NodeType>;

export type NodeRole = 'compute' | 'switch' | 'power_shelf';
export type ProductFamily = 'gb200' | 'gb300' | 'vrnvl72';

/** The RMS node descriptor: what inventory says a device is. */
export interface NodeDescriptor {
  role: NodeRole;
  vendor: string;
  productFamily: ProductFamily;
}

const rolePrefix: Record<NodeRole, string> = { compute: 'compute', switch: 'switch', power_shelf: 'powershelf' };

/** A node type's role, from its prefix (compute_…, switch_…, powershelf_…). */
export function roleOfNodeType(nodeType: string): NodeRole {
  return nodeType.startsWith('powershelf_') ? 'power_shelf' : nodeType.startsWith('switch_') ? 'switch' : 'compute';
}

/** The node type a descriptor names, or null when no driver supports it (an inventory issue). */
export function nodeTypeFor(d: NodeDescriptor): NodeType | null {
  const parsed = NodeType.safeParse(`${rolePrefix[d.role]}_${d.productFamily}_${d.vendor}`);
  return parsed.success ? parsed.data : null;
}

/** The rack families Fleet knows (docs/reference/rms-behaviours.md#racks-and-node-types). */
export const rackTypes = ['gb200_nvl72', 'gb300_nvl72', 'vr_nvl72'] as const;
export type RackType = (typeof rackTypes)[number];

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

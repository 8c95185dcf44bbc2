/** The parts of NetBox's REST objects the agent reads (NetBox 4.x serializers). */

/**
 * The fields the agent asks for (`?fields=`, NetBox ≥ 4.0): NetBox then skips the rest of each serializer, including
 * the per-object count annotations and prefetches of fields nobody reads, which dominate a page's cost. Each list
 * matches its interface below; related objects come in their brief form.
 */
export const requestedFields = {
  site: ['id', 'name', 'slug', 'status', 'last_updated'],
  rack: ['id', 'name', 'site', 'status', 'u_height', 'serial', 'rack_type', 'last_updated'],
  deviceType: ['id', 'model', 'slug', 'u_height', 'manufacturer', 'last_updated'],
  device: [
    'id',
    'name',
    'device_type',
    'role',
    'platform',
    'serial',
    'site',
    'rack',
    'position',
    'face',
    'status',
    'oob_ip',
    'custom_fields',
    'last_updated',
  ],
  interface: [
    'id',
    'device',
    'name',
    'type',
    'enabled',
    'mgmt_only',
    'mac_address',
    'primary_mac_address',
    'last_updated',
  ],
  ip: ['id', 'address', 'status', 'dns_name', 'assigned_object_type', 'assigned_object_id', 'last_updated'],
  objectChange: ['id', 'time', 'action', 'changed_object_type', 'changed_object_id'],
} as const;

/** The `fields` query parameter for one kind. */
export const fieldsParam = (kind: keyof typeof requestedFields): { fields: string } => ({
  fields: requestedFields[kind].join(','),
});
export interface Choice {
  value: string;
  label?: string;
}
export interface Brief {
  id: number;
  slug?: string;
  name?: string;
}
export interface NbSite {
  id: number;
  name: string;
  slug: string;
  status: Choice | null;
  last_updated: string;
}
export interface NbRack {
  id: number;
  name: string;
  site: Brief;
  status: Choice | null;
  u_height: number;
  serial: string | null;
  rack_type: (Brief & { model?: string }) | null;
  last_updated: string;
}
export interface NbDeviceType {
  id: number;
  model: string;
  slug: string;
  u_height: number;
  manufacturer: Brief;
  last_updated: string;
}
export interface NbDevice {
  id: number;
  name: string | null;
  device_type: Brief & { model?: string; manufacturer?: Brief };
  role: Brief | null;
  platform: Brief | null;
  serial: string | null;
  site: Brief;
  rack: Brief | null;
  position: number | null;
  face: Choice | null;
  status: Choice | null;
  oob_ip: Brief | null;
  custom_fields: Record<string, unknown>;
  last_updated: string;
}
export interface NbInterface {
  id: number;
  device: Brief;
  name: string;
  type: Choice | null;
  enabled: boolean;
  mgmt_only: boolean;
  mac_address?: string | null;
  primary_mac_address?: { mac_address: string } | null;
  last_updated: string;
}
export interface NbIpAddress {
  id: number;
  address: string;
  status: Choice | null;
  dns_name: string;
  assigned_object_type: string | null;
  assigned_object_id: number | null;
  last_updated: string;
}
export interface NbObjectChange {
  id: number;
  time: string;
  action: Choice;
  changed_object_type: string;
  changed_object_id: number;
}

import type { DeviceRow, InterfaceRow, IpRow, RackRow, SiteRow } from '@fleet/db';
import { nodeTypeFromNetbox, rackTypeFromNames, vendorFromManufacturer } from './hardware-names.js';
import type { NbDevice, NbDeviceType, NbInterface, NbIpAddress, NbRack, NbSite } from './netbox-types.js';

/** NetBox objects → mirror rows. Pure, so odd real-world data is easy to test. */
export function siteRow(s: NbSite): SiteRow {
  return {
    netboxId: s.id,
    slug: s.slug,
    name: s.name,
    status: s.status?.value ?? null,
    netboxLastUpdated: s.last_updated,
  };
}

export function rackRow(r: NbRack): RackRow {
  return {
    netboxId: r.id,
    siteNetboxId: r.site.id,
    name: r.name,
    rackType: rackTypeFromNames(`${r.rack_type?.slug ?? ''} ${r.rack_type?.model ?? ''}`),
    status: r.status?.value ?? null,
    uHeight: r.u_height,
    serial: r.serial || null,
    netboxLastUpdated: r.last_updated,
  };
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

export function deviceRow(d: NbDevice, types: Map<number, NbDeviceType>): DeviceRow {
  const type = types.get(d.device_type.id);
  const vendorSlug = type?.manufacturer.slug ?? d.device_type.manufacturer?.slug ?? null;
  const vendor = vendorSlug ? vendorFromManufacturer(vendorSlug) : null;
  const model = type?.model ?? d.device_type.model ?? null;
  return {
    netboxId: d.id,
    siteNetboxId: d.site.id,
    rackNetboxId: d.rack?.id ?? null,
    // NetBox allows unnamed devices; the mirror needs a name.
    name: d.name ?? `netbox-device-${d.id}`,
    position: d.position,
    face: d.face?.value ?? null,
    uHeight: type?.u_height ?? null,
    role: d.role?.slug ?? null,
    vendor,
    model,
    platform: d.platform?.slug ?? null,
    serial: d.serial || null,
    lifecycleState: d.status?.value ?? 'active',
    nodeType: nodeTypeFromNetbox({
      deviceTypeSlug: type?.slug ?? d.device_type.slug ?? null,
      model,
      roleSlug: d.role?.slug ?? null,
      vendor,
    }),
    managementProfile: text(d.custom_fields['fleet_management_profile']),
    credentialRef: text(d.custom_fields['fleet_credential_ref']),
    // Kept as NetBox has them: the sync flags malformed values as inventory issues, and the
    // operations refuse them (missingForNvos).
    nvosUrl: text(d.custom_fields['fleet_nvos_url']),
    nvosSsh: text(d.custom_fields['fleet_nvos_ssh']),
    nvosCredentialRef: text(d.custom_fields['fleet_nvos_credential_ref']),
    nvosHostKey: text(d.custom_fields['fleet_nvos_host_key']),
    // Names the BMC's ComputerSystem that is this device, on BMCs that manage several.
    redfishSystemId: text(d.custom_fields['fleet_redfish_system_id']),
    oobIpNetboxId: d.oob_ip?.id ?? null,
    netboxLastUpdated: d.last_updated,
  };
}

export function interfaceRow(i: NbInterface): InterfaceRow {
  return {
    netboxId: i.id,
    deviceNetboxId: i.device.id,
    name: i.name,
    type: i.type?.value ?? null,
    macAddress: i.primary_mac_address?.mac_address ?? i.mac_address ?? null,
    mgmtOnly: i.mgmt_only,
    enabled: i.enabled,
    netboxLastUpdated: i.last_updated,
  };
}

export function ipRow(a: NbIpAddress): IpRow {
  return {
    netboxId: a.id,
    address: a.address,
    status: a.status?.value ?? null,
    dnsName: a.dns_name || null,
    interfaceNetboxId: a.assigned_object_type === 'dcim.interface' ? a.assigned_object_id : null,
    netboxLastUpdated: a.last_updated,
  };
}

import { sql } from 'drizzle-orm';
import { isSiteId } from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { syncState, type SyncState } from '../schema/index.js';

/**
 * Writes for the NetBox agent: batched upserts keyed by NetBox id alone (one statement per
 * page, rows passed as one JSON parameter), deletions, BMC endpoints and the
 * inventory-issue reconciliation.
 */
export interface SiteRow {
  netboxId: number;
  slug: string;
  name: string;
  status: string | null;
  netboxLastUpdated: string;
}
export interface RackRow {
  netboxId: number;
  siteNetboxId: number;
  name: string;
  rackType: string | null;
  status: string | null;
  uHeight: number;
  serial: string | null;
  netboxLastUpdated: string;
}
export interface DeviceRow {
  netboxId: number;
  siteNetboxId: number;
  rackNetboxId: number | null;
  name: string;
  position: number | null;
  face: string | null;
  uHeight: number | null;
  role: string | null;
  vendor: string | null;
  model: string | null;
  platform: string | null;
  serial: string | null;
  lifecycleState: string;
  nodeType: string | null;
  managementProfile: string | null;
  credentialRef: string | null;
  /** Switch trays: NVOS endpoints from the fleet_nvos_* custom fields, as NetBox holds them. */
  nvosUrl: string | null;
  nvosSsh: string | null;
  nvosCredentialRef: string | null;
  nvosHostKey: string | null;
  /** The BMC's ComputerSystem that is this device (custom field fleet_redfish_system_id); absent = null. */
  redfishSystemId?: string | null;
  oobIpNetboxId: number | null;
  netboxLastUpdated: string;
}
export interface InterfaceRow {
  netboxId: number;
  deviceNetboxId: number;
  name: string;
  type: string | null;
  macAddress: string | null;
  mgmtOnly: boolean;
  enabled: boolean;
  netboxLastUpdated: string;
}
export interface IpRow {
  netboxId: number;
  address: string;
  status: string | null;
  dnsName: string | null;
  interfaceNetboxId: number | null;
  netboxLastUpdated: string;
}

const json = (rows: unknown[]) => JSON.stringify(rows);
const netboxIds = (res: { rows: { netbox_id: number }[] }) => res.rows.map((r) => Number(r.netbox_id));

export interface SiteUpsert {
  /** NetBox ids of the sites written. */
  written: number[];
  /** New sites that cannot get a Fleet site id: the slug is no DNS label, or it is the id of another live site. */
  refused: { row: SiteRow; reason: 'invalid_site_id' | 'site_id_taken' }[];
}

/**
 * A mirrored site is found by its NetBox id and keeps its Fleet id when NetBox renames its slug: the satellite's task
 * queue and the site's jobs name it. A new site takes its slug as Fleet id; it adopts a site registered through the API
 * or one left by a site deleted from NetBox, never a live site mirrored from another NetBox site.
 */
export async function upsertSites(db: DbOrTx, rows: SiteRow[]): Promise<SiteUpsert> {
  if (!rows.length) return { written: [], refused: [] };
  const recordset = (list: SiteRow[]) =>
    sql`jsonb_to_recordset(${json(list)}::jsonb)
      as r("slug" text, "name" text, "status" text, "netboxId" int, "netboxLastUpdated" timestamptz)`;
  const written = netboxIds(
    await db.execute<{ netbox_id: number }>(sql`
      update sites s set name = r."name", status = r."status", netbox_last_updated = r."netboxLastUpdated",
        last_synced_at = now(), deleted_at = null
      from ${recordset(rows)}
      where s.netbox_id = r."netboxId"
      returning s.netbox_id`),
  );
  const updated = new Set(written);
  const fresh = rows.filter((r) => !updated.has(r.netboxId));
  const refused: SiteUpsert['refused'] = fresh
    .filter((r) => !isSiteId(r.slug))
    .map((row) => ({ row, reason: 'invalid_site_id' }));
  const creatable = fresh.filter((r) => isSiteId(r.slug));
  if (creatable.length) {
    const inserted = netboxIds(
      await db.execute<{ netbox_id: number }>(sql`
        insert into sites (id, name, status, netbox_id, netbox_last_updated, last_synced_at, deleted_at)
        select r."slug", r."name", r."status", r."netboxId", r."netboxLastUpdated", now(), null
        from ${recordset(creatable)}
        on conflict (id) do update set name = excluded.name, status = excluded.status, netbox_id = excluded.netbox_id,
          netbox_last_updated = excluded.netbox_last_updated, last_synced_at = now(), deleted_at = null
        where sites.netbox_id is null or sites.deleted_at is not null
        returning netbox_id`),
    );
    const done = new Set(inserted);
    written.push(...inserted);
    refused.push(
      ...creatable.filter((r) => !done.has(r.netboxId)).map((row) => ({ row, reason: 'site_id_taken' as const })),
    );
  }
  return { written, refused };
}

/** Returns the NetBox ids written; a rack whose site is not mirrored is skipped. */
export async function upsertRacks(db: DbOrTx, rows: RackRow[]): Promise<number[]> {
  if (!rows.length) return [];
  const res = await db.execute<{ netbox_id: number }>(sql`
    insert into racks (site_id, name, rack_type, status, u_height, serial, netbox_id, netbox_last_updated,
      last_synced_at)
    select s.id, r."name", r."rackType", r."status", r."uHeight", r."serial", r."netboxId", r."netboxLastUpdated", now()
    from jsonb_to_recordset(${json(rows)}::jsonb) as r("siteNetboxId" int, "name" text, "rackType" text, "status" text,
      "uHeight" int, "serial" text, "netboxId" int, "netboxLastUpdated" timestamptz)
    join sites s on s.netbox_id = r."siteNetboxId"
    on conflict (netbox_id) do update set site_id = excluded.site_id, name = excluded.name,
      rack_type = excluded.rack_type,
      status = excluded.status, u_height = excluded.u_height, serial = excluded.serial,
      netbox_last_updated = excluded.netbox_last_updated, last_synced_at = now(), updated_at = now()
    returning netbox_id`);
  return netboxIds(res);
}

/** Returns the NetBox ids written; a device whose site is not mirrored is skipped. */
export async function upsertDevices(db: DbOrTx, rows: DeviceRow[]): Promise<number[]> {
  if (!rows.length) return [];
  const res = await db.execute<{ netbox_id: number }>(sql`
    insert into devices (name, site_id, rack_id, position, face, u_height, role, vendor, model, platform, serial,
      lifecycle_state, node_type, management_profile, credential_ref, nvos_url, nvos_ssh, nvos_credential_ref,
      nvos_host_key, redfish_system_id, oob_ip_netbox_id, netbox_id, netbox_last_updated, last_synced_at, deleted_at)
    select r."name", s.id, rk.id, r."position", r."face", r."uHeight", r."role", r."vendor", r."model", r."platform",
      r."serial", r."lifecycleState", r."nodeType", r."managementProfile", r."credentialRef", r."nvosUrl", r."nvosSsh",
      r."nvosCredentialRef", r."nvosHostKey",
      r."redfishSystemId", r."oobIpNetboxId", r."netboxId", r."netboxLastUpdated", now(), null
    from jsonb_to_recordset(${json(rows)}::jsonb) as r("name" text, "siteNetboxId" int, "rackNetboxId" int,
      "position" numeric, "face" text,
      "uHeight" numeric, "role" text, "vendor" text, "model" text, "platform" text, "serial" text,
      "lifecycleState" text,
      "nodeType" text, "managementProfile" text, "credentialRef" text, "nvosUrl" text, "nvosSsh" text,
      "nvosCredentialRef" text, "nvosHostKey" text,
      "redfishSystemId" text, "oobIpNetboxId" int, "netboxId" int, "netboxLastUpdated" timestamptz)
    join sites s on s.netbox_id = r."siteNetboxId"
    left join racks rk on rk.netbox_id = r."rackNetboxId"
    on conflict (netbox_id) do update set name = excluded.name, site_id = excluded.site_id, rack_id = excluded.rack_id,
      position = excluded.position, face = excluded.face, u_height = excluded.u_height, role = excluded.role,
      vendor = excluded.vendor, model = excluded.model, platform = excluded.platform, serial = excluded.serial,
      lifecycle_state = excluded.lifecycle_state, node_type = excluded.node_type,
      management_profile = excluded.management_profile,
      credential_ref = excluded.credential_ref, nvos_url = excluded.nvos_url, nvos_ssh = excluded.nvos_ssh,
      nvos_credential_ref = excluded.nvos_credential_ref, nvos_host_key = excluded.nvos_host_key,
      redfish_system_id = excluded.redfish_system_id, oob_ip_netbox_id = excluded.oob_ip_netbox_id,
      netbox_last_updated = excluded.netbox_last_updated, last_synced_at = now(),
      deleted_at = null, updated_at = now()
    returning netbox_id`);
  return netboxIds(res);
}

/** Returns the NetBox ids written; an interface of a device that is not mirrored is skipped. */
export async function upsertInterfaces(db: DbOrTx, rows: InterfaceRow[]): Promise<number[]> {
  if (!rows.length) return [];
  const res = await db.execute<{ netbox_id: number }>(sql`
    insert into interfaces (device_id, name, type, mac_address, mgmt_only, enabled, netbox_id, netbox_last_updated,
      last_synced_at)
    select d.id, r."name", r."type", r."macAddress", r."mgmtOnly", r."enabled", r."netboxId", r."netboxLastUpdated",
      now()
    from jsonb_to_recordset(${json(rows)}::jsonb)
      as r("deviceNetboxId" int, "name" text, "type" text, "macAddress" text,
      "mgmtOnly" boolean, "enabled" boolean, "netboxId" int, "netboxLastUpdated" timestamptz)
    join devices d on d.netbox_id = r."deviceNetboxId"
    on conflict (netbox_id) do update set device_id = excluded.device_id, name = excluded.name, type = excluded.type,
      mac_address = excluded.mac_address, mgmt_only = excluded.mgmt_only, enabled = excluded.enabled,
      netbox_last_updated = excluded.netbox_last_updated, last_synced_at = now()
    returning netbox_id`);
  return netboxIds(res);
}

/**
 * Only addresses on an interface of a device we mirror are kept; others are out of scope. Returns the NetBox ids
 * written.
 */
export async function upsertIpAddresses(db: DbOrTx, rows: IpRow[]): Promise<number[]> {
  if (!rows.length) return [];
  const res = await db.execute<{ netbox_id: number }>(sql`
    insert into ip_addresses (address, status, dns_name, interface_id, device_id, netbox_id, netbox_last_updated,
      last_synced_at)
    select r."address", r."status", r."dnsName", i.id, i.device_id, r."netboxId", r."netboxLastUpdated", now()
    from jsonb_to_recordset(${json(rows)}::jsonb)
      as r("address" text, "status" text, "dnsName" text, "interfaceNetboxId" int,
      "netboxId" int, "netboxLastUpdated" timestamptz)
    join interfaces i on i.netbox_id = r."interfaceNetboxId"
    on conflict (netbox_id) do update set address = excluded.address, status = excluded.status,
      dns_name = excluded.dns_name,
      interface_id = excluded.interface_id, device_id = excluded.device_id,
      netbox_last_updated = excluded.netbox_last_updated, last_synced_at = now()
    returning netbox_id`);
  return netboxIds(res);
}

/** Fleet site ids of mirrored NetBox sites (they differ from the slug after a slug rename). */
export async function siteIdsByNetboxId(db: DbOrTx, ids: number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map();
  const res = await db.execute<{ id: string; netbox_id: number }>(
    sql`select id, netbox_id from sites where netbox_id = any(${`{${ids.join(',')}}`}::int[])`,
  );
  return new Map(res.rows.map((r) => [Number(r.netbox_id), r.id]));
}

export type NetboxKind = 'site' | 'rack' | 'device' | 'interface' | 'ip';
const tables: Record<NetboxKind, string> = {
  site: 'sites',
  rack: 'racks',
  device: 'devices',
  interface: 'interfaces',
  ip: 'ip_addresses',
};
const softDeleted = new Set<NetboxKind>(['site', 'device']);

/**
 * Removes objects NetBox deleted. Sites and devices are kept, marked deleted (jobs and
 * audit rows refer to them); racks, interfaces and addresses go.
 */
export async function deleteByNetboxIds(db: DbOrTx, kind: NetboxKind, ids: number[]): Promise<number> {
  if (!ids.length) return 0;
  const table = sql.raw(tables[kind]);
  const res = softDeleted.has(kind)
    ? await db.execute(
        sql`update ${table} set deleted_at = now()
          where netbox_id = any(${`{${ids.join(',')}}`}::int[]) and deleted_at is null`,
      )
    : await db.execute(sql`delete from ${table} where netbox_id = any(${`{${ids.join(',')}}`}::int[])`);
  return res.rowCount ?? 0;
}

/**
 * Full reconcile: everything synced from NetBox that NetBox no longer has, within the
 * configured sites when the mirror is limited to some.
 */
export async function deleteMissing(
  db: DbOrTx,
  kind: NetboxKind,
  present: number[],
  siteIds?: string[],
): Promise<number> {
  const table = sql.raw(tables[kind]);
  const keep = `{${present.join(',')}}`;
  let inScope = sql``;
  if (siteIds?.length) {
    const sites = `{${siteIds.join(',')}}`;
    inScope =
      kind === 'site'
        ? sql` and id = any(${sites}::text[])`
        : kind === 'rack' || kind === 'device'
          ? sql` and site_id = any(${sites}::text[])`
          : sql` and device_id in (select id from devices where site_id = any(${sites}::text[]))`;
  }
  const res = softDeleted.has(kind)
    ? await db.execute(
        sql`update ${table} set deleted_at = now()
          where netbox_id is not null and deleted_at is null and not (netbox_id = any(${keep}::int[]))${inScope}`,
      )
    : await db.execute(
        sql`delete from ${table} where netbox_id is not null and not (netbox_id = any(${keep}::int[]))${inScope}`,
      );
  return res.rowCount ?? 0;
}

/** NetBox ids of the objects a pass wrote, refused or deleted, by kind (sites and racks derive nothing). */
export interface ChangedObjects {
  devices: number[];
  interfaces: number[];
  ips: number[];
}

// One array parameter however many ids (pg sends a JS array as a Postgres array).
const arrayParam = (values: readonly (number | string)[]) => sql.param([...values]);

/**
 * The mirrored devices whose BMC endpoint or inventory issues may follow from the changed objects: the devices
 * themselves, those of the interfaces and addresses, those naming an address as OOB IP, and every device holding
 * one of their addresses (an address on two devices flags both). Run before and after the pass is applied, the
 * union covers what a change moved away from as well as what it moved to. Each step is an index lookup, so the cost
 * follows the changes, not the mirror.
 */
export async function devicesAffectedBy(db: DbOrTx, changed: ChangedObjects): Promise<string[]> {
  if (!changed.devices.length && !changed.interfaces.length && !changed.ips.length) return [];
  const res = await db.execute<{ id: string }>(sql`
    with direct as (
      select id from devices where netbox_id = any(${arrayParam(changed.devices)}::int[])
      union select device_id from interfaces where netbox_id = any(${arrayParam(changed.interfaces)}::int[])
      union select device_id from ip_addresses
        where netbox_id = any(${arrayParam(changed.ips)}::int[]) and device_id is not null
      union select id from devices where oob_ip_netbox_id = any(${arrayParam(changed.ips)}::int[])
    ),
    held as (
      select split_part(address, '/', 1) as ip from ip_addresses where device_id = any(array(select id from direct))
      union select split_part(address, '/', 1) from ip_addresses
        where netbox_id = any(${arrayParam(changed.ips)}::int[])
    )
    select id from direct
    -- An array, not a join: the planner cannot guess how few addresses there are and would hash the whole table.
    union select device_id from ip_addresses
      where split_part(address, '/', 1) = any(array(select ip from held)) and device_id is not null`);
  return res.rows.map((r) => r.id);
}

/**
 * Defers the compliance triggers on devices for the rest of this transaction (migration 0026): the sync writes many
 * devices in one long transaction and refreshes their compliance once at the end (`refreshCompliance`).
 */
export async function deferCompliance(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select set_config('fleet.compliance_deferred', 'on', true)`);
}

/**
 * Recomputes the compliance of the given devices (every device, live or with a compliance row, without ids) in one
 * set-based pass that locks their rows in id order, as the firmware reports do.
 */
export async function refreshCompliance(tx: DbOrTx, deviceIds?: string[]): Promise<void> {
  const ids = deviceIds
    ? sql`(select id from unnest(${arrayParam(deviceIds)}::uuid[]) as i(id) order by 1)`
    : sql`(select id from devices where deleted_at is null union select device_id from device_compliance order by 1)`;
  await tx.execute(sql`select fleet_compliance_refresh(array${ids})`);
}

/**
 * Refreshes the planner's statistics of the mirror tables. A full pass into an empty or much smaller mirror would
 * otherwise plan its derive statements for the row counts from before the pass: at 10,000 devices the BMC lookup
 * below took 30 s instead of a fraction of one. ANALYZE samples the rows this transaction wrote; a role that does
 * not own the tables gets a warning from Postgres and the old statistics.
 */
export async function analyzeMirror(db: DbOrTx): Promise<void> {
  await db.execute(sql`analyze sites, racks, devices, interfaces, ip_addresses`);
}

/**
 * Each synced device's candidate BMC addresses: its OOB IP, else IPs on management interfaces. Limited to the given
 * devices when there are some (an incremental pass), every synced device otherwise.
 */
export async function bmcCandidates(
  db: DbOrTx,
  deviceIds?: string[],
): Promise<{ deviceId: string; profile: string | null; addresses: string[]; duplicated: boolean }[]> {
  if (deviceIds && !deviceIds.length) return [];
  const only = deviceIds ? sql` and d.id = any(${arrayParam(deviceIds)}::uuid[])` : sql``;
  // Correlated lookups go to the tables' indexes (netbox_id, device_id, the host part of the address): a CTE read per
  // device made this quadratic in the mirror.
  const res = await db.execute<{
    device_id: string;
    profile: string | null;
    addresses: string[] | null;
    duplicated: boolean;
  }>(sql`
    select d.id as device_id, d.management_profile as profile,
      coalesce(
        (select array_agg(split_part(h.address, '/', 1)) from ip_addresses h where h.netbox_id = d.oob_ip_netbox_id),
        (select array_agg(split_part(h.address, '/', 1) order by split_part(h.address, '/', 1))
          from ip_addresses h join interfaces i on i.id = h.interface_id
          where i.device_id = d.id and i.mgmt_only)
      ) as addresses,
      exists (select 1 from ip_addresses h join ip_addresses o
          on split_part(o.address, '/', 1) = split_part(h.address, '/', 1)
        where h.device_id = d.id and o.device_id is not null and o.device_id <> d.id) as duplicated
    from devices d where d.netbox_id is not null and d.deleted_at is null${only}`);
  return res.rows.map((r) => ({
    deviceId: r.device_id,
    profile: r.profile,
    addresses: r.addresses ?? [],
    duplicated: r.duplicated,
  }));
}

export async function setBmcUrls(db: DbOrTx, rows: { deviceId: string; bmcUrl: string | null }[]): Promise<void> {
  if (!rows.length) return;
  await db.execute(sql`
    update devices d set bmc_url = r."bmcUrl", updated_at = now()
    from jsonb_to_recordset(${json(rows)}::jsonb) as r("deviceId" uuid, "bmcUrl" text)
    where d.id = r."deviceId" and d.bmc_url is distinct from r."bmcUrl"`);
}

/** A problem met while applying a pass (not derived from the mirror): the object is not, or not fully, mirrored. */
export interface SyncIssue {
  /** NetBox's object type, e.g. dcim.device. */
  objectType: string;
  netboxId: number;
  code: SyncIssueCode;
  message: string;
}
export const syncIssueCodes = ['invalid_site_id', 'site_id_taken', 'site_not_mirrored', 'apply_failed'] as const;
export type SyncIssueCode = (typeof syncIssueCodes)[number];

/**
 * What a pass knows about the problems it met. A full pass saw every object, so a sync issue it did not meet again is
 * resolved; an incremental pass settles only the objects it applied or deleted.
 */
export interface PassIssues {
  issues: SyncIssue[];
  settled: 'all' | { objectType: string; netboxId: number }[];
}

/**
 * Recomputes open inventory issues from the mirror as it now is, plus those the pass met:
 * new problems are opened, problems still there are touched, fixed ones are resolved. Given devices (an incremental
 * pass: devicesAffectedBy), only their derived issues are recomputed; the others' cannot have changed.
 */
export async function refreshInventoryIssues(
  db: DbOrTx,
  pass: PassIssues = { issues: [], settled: 'all' },
  deviceIds?: string[],
): Promise<{ open: number }> {
  const settledAll = pass.settled === 'all';
  const settled = pass.settled === 'all' ? [] : pass.settled;
  const scoped = deviceIds !== undefined;
  const devices = arrayParam(deviceIds ?? []);
  // Each derived branch reads the scoped devices by primary key instead of scanning the mirror.
  const inScope = scoped ? sql` and d.id = any(${devices}::uuid[])` : sql``;
  const syncCodes = arrayParam(syncIssueCodes);
  // A sync issue stays open until a pass applies (or deletes) its object again; a derived one is resolved when it is
  // no longer found among the devices recomputed.
  const resolvable = scoped
    ? sql`((not (i.code = any(${syncCodes}::text[])) and i.device_id = any(${devices}::uuid[]))
        or (i.code = any(${syncCodes}::text[])
          and exists (select 1 from settled s where s.object_type = i.object_type and s.netbox_id = i.netbox_id)))`
    : sql`(${settledAll}::boolean or not (i.code = any(${syncCodes}::text[]))
        or exists (select 1 from settled s where s.object_type = i.object_type and s.netbox_id = i.netbox_id))`;
  await db.execute(sql`
    with found as (
      select 'dcim.device' as object_type, d.netbox_id, d.id as device_id, 'missing_bmc_address' as code,
             'no BMC address: NetBox gives the device no OOB IP and no IP on a management-only interface' as message
        from devices d where d.netbox_id is not null and d.deleted_at is null${inScope} and d.bmc_url is null
          and not exists (select 1 from ip_addresses a where a.device_id = d.id)
      union all
      select 'dcim.device', d.netbox_id, d.id, 'duplicate_ip',
             'BMC address ' || split_part(a.address, '/', 1) || ' is also assigned to another device; '
               || 'the device is not operated until NetBox is fixed'
        from devices d join ip_addresses a on a.device_id = d.id
        where d.netbox_id is not null and d.deleted_at is null${inScope}
          and exists (select 1 from ip_addresses b where split_part(b.address, '/', 1) = split_part(a.address, '/', 1)
            and b.device_id is not null and b.device_id <> d.id)
      union all
      select 'dcim.device', d.netbox_id, d.id, 'unknown_node_type',
             'no driver for role ' || coalesce(d.role, '?') || ', vendor ' || coalesce(d.vendor, '?')
               || ', model ' || coalesce(d.model, '?')
        from devices d where d.netbox_id is not null and d.deleted_at is null${inScope} and d.node_type is null
      union all
      select 'dcim.device', d.netbox_id, d.id, 'missing_credential_ref', 'custom field fleet_credential_ref is empty'
        from devices d where d.netbox_id is not null and d.deleted_at is null${inScope} and d.node_type is not null
          and d.credential_ref is null
      union all
      select 'dcim.device', d.netbox_id, d.id, 'invalid_management_profile',
             'custom field fleet_management_profile is ' || d.management_profile
               || '; expected redfish, redfish-https:<port> or redfish-http:<port>'
        from devices d where d.netbox_id is not null and d.deleted_at is null${inScope}
          and d.management_profile is not null and d.management_profile !~ '^redfish(-https?(:[0-9]{1,5})?)?$'
      union all
      -- NetBox and the hardware disagree: the serial an enrolment read from the BMC is not NetBox's.
      select 'dcim.device', d.netbox_id, d.id, 'hardware_serial_mismatch',
             'NetBox gives serial ' || d.serial || ' but the BMC reports ' || h.serial_number
               || ' (read ' || to_char(h.read_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ')'
        from devices d join device_hardware h on h.device_id = d.id
        where d.netbox_id is not null and d.deleted_at is null${inScope} and coalesce(d.serial, '') <> ''
          and h.serial_number is not null and h.serial_number <> d.serial
      union all
      -- The same rules as the domain's missingForNvos, which refuses the operations themselves.
      select 'dcim.device', d.netbox_id, d.id, 'missing_nvos_endpoint',
             'custom fields fleet_nvos_url and fleet_nvos_ssh must give the switch''s NVUE URL and SSH host:port; '
               || 'NVOS image, firmware, password and certificate operations are refused until they do'
        from devices d where d.netbox_id is not null and d.deleted_at is null${inScope}
          and d.node_type like 'switch!_%' escape '!'
          and (d.nvos_url is null or d.nvos_ssh is null)
      union all
      select 'dcim.device', p.netbox_id, p.id, 'invalid_nvos_endpoint', p.problems from (
        select d.netbox_id, d.id, concat_ws('; ',
            case when d.nvos_url !~ '^https?://[^[:space:]/?#@]+(/[^[:space:]?#]*)?$'
              then 'fleet_nvos_url is ' || d.nvos_url || '; expected http(s)://host[:port]' end,
            case when d.nvos_ssh !~ '^([[][0-9A-Fa-f:.]+[]]|[A-Za-z0-9.-]+):[0-9]{1,5}$'
              then 'fleet_nvos_ssh is ' || d.nvos_ssh || '; expected host:port' end,
            case when d.nvos_host_key !~ '^SHA256:[A-Za-z0-9+/]{43}$'
              then 'fleet_nvos_host_key is not an SSH fingerprint (SHA256:<base64>)' end) as problems
          from devices d where d.netbox_id is not null and d.deleted_at is null${inScope}
            and coalesce(d.nvos_url, d.nvos_ssh, d.nvos_host_key) is not null
      ) p where p.problems <> ''
      union all
      select r."objectType", r."netboxId",
             (select d.id from devices d where r."objectType" = 'dcim.device' and d.netbox_id = r."netboxId"),
             r."code", r."message"
        from jsonb_to_recordset(${json(pass.issues)}::jsonb)
          as r("objectType" text, "netboxId" int, "code" text, "message" text)
    ),
    distinct_found as (select distinct on (object_type, netbox_id, code) * from found),
    settled as (
      select r."objectType" as object_type, r."netboxId" as netbox_id
        from jsonb_to_recordset(${json(settled)}::jsonb) as r("objectType" text, "netboxId" int)
    ),
    opened as (
      insert into inventory_issues (object_type, netbox_id, device_id, code, message)
      select object_type, netbox_id, device_id, code, message from distinct_found
      on conflict (object_type, netbox_id, code) where resolved_at is null
      do update set last_seen_at = now(), message = excluded.message, device_id = excluded.device_id
      returning id)
    update inventory_issues i set resolved_at = now()
    where i.resolved_at is null and i.id not in (select id from opened) and ${resolvable}`);
  const open = await db.execute<{ n: number }>(
    sql`select count(*)::int as n from inventory_issues where resolved_at is null`,
  );
  return { open: Number(open.rows[0]?.n ?? 0) };
}

/** Objects with an open sync issue, which an incremental pass fetches again (the object may not have changed). */
export async function openSyncIssueObjects(db: DbOrTx): Promise<{ objectType: string; netboxId: number }[]> {
  const res = await db.execute<{ object_type: string; netbox_id: number }>(sql`
    select distinct object_type, netbox_id from inventory_issues
    where resolved_at is null and code = any(${`{${syncIssueCodes.join(',')}}`}::text[])`);
  return res.rows.map((r) => ({ objectType: r.object_type, netboxId: Number(r.netbox_id) }));
}

export async function getOrCreateSyncState(db: DbOrTx, scope: string): Promise<SyncState> {
  await db.insert(syncState).values({ scope }).onConflictDoNothing();
  return (await db.query.syncState.findFirst({ where: sql`${syncState.scope} = ${scope}` }))!;
}

export async function updateSyncState(
  db: DbOrTx,
  scope: string,
  patch: Partial<Omit<SyncState, 'scope'>>,
): Promise<void> {
  await db
    .update(syncState)
    .set(patch)
    .where(sql`${syncState.scope} = ${scope}`);
}

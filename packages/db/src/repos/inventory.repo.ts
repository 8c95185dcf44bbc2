import { and, asc, desc, eq, gt, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { PgDialect, type AnyPgColumn } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../client.js';
import { translatingViolations } from '../errors.js';
import {
  devices,
  interfaces,
  inventoryIssues,
  ipAddresses,
  racks,
  sites,
  syncState,
  type Device,
  type InventoryIssue,
  type NewDevice,
  type Rack,
  type Site,
  type SyncState,
} from '../schema/index.js';

export async function insertSite(db: DbOrTx, site: { id: string; name: string }): Promise<Site> {
  const [row] = await db.insert(sites).values(site).returning();
  return row!;
}

export async function getSite(db: DbOrTx, id: string): Promise<Site | undefined> {
  return db.query.sites.findFirst({ where: eq(sites.id, id) });
}

export async function listSites(db: DbOrTx): Promise<Site[]> {
  return db.select().from(sites).where(isNull(sites.deletedAt)).orderBy(asc(sites.id));
}

/** A device registered by hand whose name its site already has is a UniqueViolation of uniqueIndexes.deviceName. */
export async function insertDevice(db: DbOrTx, device: NewDevice): Promise<Device> {
  const [row] = await translatingViolations(db.insert(devices).values(device).returning());
  return row!;
}

export async function getDevice(db: DbOrTx, id: string): Promise<Device | undefined> {
  return db.query.devices.findFirst({ where: eq(devices.id, id) });
}

export const deviceFilterColumns = {
  siteId: devices.siteId,
  rackId: devices.rackId,
  role: devices.role,
  vendor: devices.vendor,
  model: devices.model,
  nodeType: devices.nodeType,
  lifecycleState: devices.lifecycleState,
  powerState: devices.powerState,
  firmwareVersion: devices.firmwareVersion,
} as const;
export type DeviceFilters = Partial<Record<keyof typeof deviceFilterColumns, string[]>>;

export const deviceSortColumns = { name: devices.name, created_at: devices.createdAt } as const;
export type DeviceSort = keyof typeof deviceSortColumns;

export interface DevicePageQuery {
  limit: number;
  filters?: DeviceFilters;
  sort?: DeviceSort;
  descending?: boolean;
  /** Keyset position: the sort value and id of the last row of the previous page. */
  after?: { value: string | Date; id: string };
}

/** A filtered, sorted page of devices; every filter and sort column is indexed. */
export async function listDevices(db: DbOrTx, q: DevicePageQuery): Promise<Device[]> {
  return deviceListQuery(db, q);
}

/** The statement listDevices runs (`.toSQL()` shows it: the hub-list bench runs it raw over pg as its baseline). */
export function deviceListQuery(db: DbOrTx, q: DevicePageQuery) {
  const page = devicePage(q);
  return db
    .select()
    .from(devices)
    .where(page.where)
    .orderBy(...page.orderBy)
    .limit(q.limit);
}

function devicePage(q: DevicePageQuery): { where: SQL | undefined; orderBy: SQL[] } {
  const c: SQL[] = [isNull(devices.deletedAt)];
  for (const [key, values] of Object.entries(q.filters ?? {}) as [keyof DeviceFilters, string[] | undefined][]) {
    if (values?.length) c.push(inArray(deviceFilterColumns[key], values));
  }
  const col = deviceSortColumns[q.sort ?? 'name'];
  const cmp = q.descending ? lt : gt;
  if (q.after) {
    c.push(or(cmp(col, q.after.value), and(eq(col, q.after.value), cmp(devices.id, q.after.id)))!);
  }
  const dir = q.descending ? desc : asc;
  return { where: and(...c), orderBy: [dir(col), dir(devices.id)] };
}

/** Postgres's SQL dialect, to render a statement to text and parameters. */
export const pgDialect = new PgDialect();

/** A timestamp as JavaScript's Date#toISOString writes it (UTC, milliseconds truncated as pg's Date parsing does). */
const isoText = (column: SQL | AnyPgColumn) =>
  sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A page row of listDevicesJson: the device as API JSON, and what a keyset cursor after it is made of. */
export interface DeviceJsonRow {
  id: string;
  name: string;
  role: string | null;
  /** created_at as an ISO 8601 string. */
  createdAt: string;
  /** The device in the API's `Device` shape, as JSON text. */
  json: string;
}

/** The device JSON of listDevicesJson over the row `"devices"` and `"sync_state"`; parameterless, so built once. */
const deviceJson = (() => {
  const provenance = sql`case when ${devices.netboxId} is null then '{"source":"api"}'::json
    else (select row_to_json(p) from (select
      'netbox'::text as source,
      ${devices.netboxId} as netbox_id,
      case when ${syncState.sourceUrl} <> ''
        then regexp_replace(${syncState.sourceUrl}, '/$', '') || '/dcim/devices/' || ${devices.netboxId} || '/'
      end as netbox_url,
      ${isoText(devices.netboxLastUpdated)} as netbox_last_updated,
      ${isoText(devices.lastSyncedAt)} as last_synced_at,
      coalesce(${syncState.stale}, true) as stale) p) end`;
  const view = sql`(select row_to_json(v)::text from (select
    ${devices.id} as id, ${devices.name} as name, ${devices.siteId} as site_id, ${devices.rackId} as rack_id,
    ${devices.position}::float8 as position, ${devices.face} as face, ${devices.uHeight}::float8 as u_height,
    ${devices.role} as role, ${devices.vendor} as vendor, ${devices.model} as model, ${devices.platform} as platform,
    ${devices.serial} as serial, ${devices.nodeType} as node_type, ${devices.lifecycleState} as lifecycle_state,
    ${devices.managementProfile} as management_profile, ${devices.bmcUrl} as bmc_url,
    ${devices.credentialRef} as credential_ref, ${devices.nvosUrl} as nvos_url, ${devices.nvosSsh} as nvos_ssh,
    ${devices.nvosCredentialRef} as nvos_credential_ref, ${devices.nvosHostKey} as nvos_host_key,
    ${devices.firmwareVersion} as firmware_version, ${devices.powerState} as power_state,
    ${isoText(devices.powerStateAt)} as power_state_at, ${isoText(devices.deletedAt)} as deleted_at,
    ${isoText(devices.createdAt)} as created_at, ${isoText(devices.updatedAt)} as updated_at,
    ${provenance} as provenance) v)`;
  const text = pgDialect.sqlToQuery(view);
  if (text.params.length) throw new Error('the device JSON expression must not take parameters');
  return sql.raw(text.sql);
})();

/**
 * The page listDevices returns, each device already as the JSON text of the API's `Device` (the hub's deviceView,
 * field for field and in its order, provenance from the `syncScope` sync state): Postgres writes it in the same
 * statement, so a list is passed through instead of mapped row by row, viewed and stringified again. Numeric
 * columns go through float8 (`10.50` is `10.5`, as Number() makes it) and timestamps through isoText. The page is
 * cut first (the inner select, the very statement listDevices runs) so only its rows are turned into JSON.
 */
export async function listDevicesJson(db: DbOrTx, q: DevicePageQuery, syncScope: string): Promise<DeviceJsonRow[]> {
  const result = await db.execute<{ id: string; name: string; role: string | null; created_at: string; json: string }>(
    deviceJsonListStatement(db, q, syncScope),
  );
  return result.rows.map((r) => ({ id: r.id, name: r.name, role: r.role, createdAt: r.created_at, json: r.json }));
}

/** The statement listDevicesJson runs; `dialect.sqlToQuery()` of it is the text and parameters (benches run it). */
export function deviceJsonListStatement(db: DbOrTx, q: DevicePageQuery, syncScope: string): SQL {
  const { orderBy } = devicePage(q);
  return sql`select ${devices.id} as id, ${devices.name} as name, ${devices.role} as role,
      ${isoText(devices.createdAt)} as created_at, ${deviceJson} as json
    from (${deviceListQuery(db, q)}) as ${devices}
    left join ${syncState} on ${syncState.scope} = ${syncScope}
    order by ${sql.join(orderBy, sql`, `)}`;
}

export async function listRacks(db: DbOrTx, siteIds?: string[]): Promise<(Rack & { deviceCount: number })[]> {
  const rows = await db
    .select({
      rack: racks,
      deviceCount: sql<number>`(select count(*)::int from devices d
        where d.rack_id = "racks"."id" and d.deleted_at is null)`,
    })
    .from(racks)
    .where(siteIds?.length ? inArray(racks.siteId, siteIds) : undefined)
    // Rack names repeat within a site (NetBox makes them unique per location): the id keeps the order stable.
    .orderBy(asc(racks.siteId), asc(racks.name), asc(racks.id));
  return rows.map((r) => ({ ...r.rack, deviceCount: r.deviceCount }));
}

export async function getRack(db: DbOrTx, id: string): Promise<Rack | undefined> {
  return db.query.racks.findFirst({ where: eq(racks.id, id) });
}

/** The devices of a rack, top of the rack first, as an elevation is drawn. */
export async function rackDevices(db: DbOrTx, rackId: string): Promise<Device[]> {
  return db
    .select()
    .from(devices)
    .where(and(eq(devices.rackId, rackId), isNull(devices.deletedAt)))
    .orderBy(sql`${devices.position} desc nulls last`, asc(devices.name), asc(devices.id));
}

export async function deviceNetwork(db: DbOrTx, deviceId: string) {
  const ifs = await db.select().from(interfaces).where(eq(interfaces.deviceId, deviceId)).orderBy(asc(interfaces.name));
  const ips = await db
    .select()
    .from(ipAddresses)
    .where(eq(ipAddresses.deviceId, deviceId))
    .orderBy(asc(ipAddresses.address));
  return { interfaces: ifs, addresses: ips };
}

export async function listInventoryIssues(
  db: DbOrTx,
  q: { deviceId?: string[]; code?: string[]; includeResolved?: boolean; limit: number; afterId?: number },
): Promise<InventoryIssue[]> {
  const c: SQL[] = [];
  if (q.deviceId?.length) c.push(inArray(inventoryIssues.deviceId, q.deviceId));
  if (q.code?.length) c.push(inArray(inventoryIssues.code, q.code));
  if (!q.includeResolved) c.push(isNull(inventoryIssues.resolvedAt));
  if (q.afterId !== undefined) c.push(gt(inventoryIssues.id, q.afterId));
  return db
    .select()
    .from(inventoryIssues)
    .where(c.length ? and(...c) : undefined)
    .orderBy(asc(inventoryIssues.id))
    .limit(q.limit);
}

export async function getSyncState(db: DbOrTx, scope: string): Promise<SyncState | undefined> {
  return db.query.syncState.findFirst({ where: eq(syncState.scope, scope) });
}

/** Records observed power states in one statement, never moving a reading back in time. */
export async function recordPowerStates(
  db: DbOrTx,
  readings: { deviceId: string; powerState: string; at: Date }[],
): Promise<void> {
  if (readings.length === 0) return;
  await db.execute(sql`
    update devices d set power_state = r.power_state, power_state_at = r.at, updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(
      readings.map((r) => ({ id: r.deviceId, power_state: r.powerState, at: r.at.toISOString() })),
    )}::jsonb)
      as r(id uuid, power_state text, at timestamptz)
    where d.id = r.id and (d.power_state_at is null or d.power_state_at <= r.at)`);
}

export async function getDevicesByIds(db: DbOrTx, ids: string[]): Promise<Device[]> {
  if (!ids.length) return [];
  return db.select().from(devices).where(inArray(devices.id, ids));
}

/** The roles (NetBox role slugs) the mirrored devices have: what a role filter can name. */
export async function listDeviceRoles(db: DbOrTx): Promise<string[]> {
  const rows = await db
    .selectDistinct({ role: devices.role })
    .from(devices)
    .where(and(isNull(devices.deletedAt), sql`${devices.role} is not null`))
    .orderBy(asc(devices.role));
  return rows.map((r) => r.role!);
}

/** Of `roles`, those no current device holds: one index probe per role, where listDeviceRoles reads every device. */
export async function unheldDeviceRoles(db: DbOrTx, roles: string[]): Promise<string[]> {
  if (!roles.length) return [];
  const rows = await db.execute<{ role: string }>(sql`
    select r.role from unnest(${sql.param(roles)}::text[]) as r(role)
    where not exists (select 1 from devices d where d.role = r.role and d.deleted_at is null)`);
  return rows.rows.map((r) => r.role);
}

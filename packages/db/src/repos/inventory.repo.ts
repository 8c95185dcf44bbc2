import { and, asc, desc, eq, gt, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { PgDialect, type AnyPgColumn } from 'drizzle-orm/pg-core';
import {
  conditionTypes,
  fleetLifecycleStates,
  type ConditionStatus,
  type ConditionType,
  type DeviceCondition,
  type FleetLifecycleState,
} from '@fleet/domain';
import type { DbOrTx } from '../client.js';
import { translatingViolations } from '../errors.js';
import {
  deviceConditions,
  devices,
  deviceTransitions,
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
import { listConditions } from './conditions.repo.js';

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
  fleetLifecycle: devices.fleetLifecycle,
  powerState: devices.powerState,
  firmwareVersion: devices.firmwareVersion,
} as const;
export type DeviceFilters = Partial<Record<keyof typeof deviceFilterColumns, string[]>>;

export const deviceSortColumns = { name: devices.name, created_at: devices.createdAt } as const;
export type DeviceSort = keyof typeof deviceSortColumns;

/** A condition filter: devices whose condition of `type` has `status` (a device without that condition has none). */
export interface ConditionFilter {
  type: ConditionType;
  status: ConditionStatus;
}

export interface DevicePageQuery {
  limit: number;
  filters?: DeviceFilters;
  /** Devices with any of these conditions (OR, as a repeated filter); ANDed with `filters`. */
  conditions?: ConditionFilter[];
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
  if (q.conditions?.length) {
    const anyOf = or(
      ...q.conditions.map((f) => and(eq(deviceConditions.type, f.type), eq(deviceConditions.status, f.status))),
    );
    // A semi-join: by device_conditions_type_status_device_id_idx when few devices match, else a primary-key probe.
    c.push(sql`exists (select 1 from ${deviceConditions}
      where ${deviceConditions.deviceId} = ${devices.id} and ${anyOf})`);
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

/** A move of the lifecycle axis itself, not a change of its condition (Schedulable): the partial index's predicate. */
const lastLifecycleMove = sql`${deviceTransitions.axis} = 'lifecycle' and ${deviceTransitions.conditionType} is null`;

/** What a device read shows beside the device row: since when it is in its Fleet lifecycle state, its conditions. */
export interface DeviceStatus {
  /** The time of its last lifecycle move; its creation when it never moved. */
  lifecycleSince: Date;
  conditions: DeviceCondition[];
}

/** The status of one device, as listDevicesJson writes it for each device of a page. */
export async function getDeviceStatus(db: DbOrTx, device: Pick<Device, 'id' | 'createdAt'>): Promise<DeviceStatus> {
  const [[last], conditions] = await Promise.all([
    db
      .select({ at: deviceTransitions.at })
      .from(deviceTransitions)
      .where(and(eq(deviceTransitions.deviceId, device.id), lastLifecycleMove))
      .orderBy(desc(deviceTransitions.id))
      .limit(1),
    listConditions(db, device.id),
  ]);
  return { lifecycleSince: last?.at ?? device.createdAt, conditions };
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
  // Fleet's lifecycle and since when: the last lifecycle move (by device_transitions_lifecycle_device_id_id_idx), or
  // the device's creation when it never moved (getDeviceStatus).
  const lastMove = sql`(select ${deviceTransitions.at} from ${deviceTransitions}
    where ${deviceTransitions.deviceId} = ${devices.id} and ${lastLifecycleMove}
    order by ${deviceTransitions.id} desc limit 1)`;
  const lifecycle = sql`json_build_object('state', ${devices.fleetLifecycle},
    'since', ${isoText(sql`coalesce(${lastMove}, ${devices.createdAt})`)})`;
  // In listConditions' order (by type).
  const conditions = sql`(select coalesce(json_agg(json_build_object(
      'type', ${deviceConditions.type}, 'status', ${deviceConditions.status}, 'reason', ${deviceConditions.reason},
      'message', ${deviceConditions.message},
      'last_transition_time', ${isoText(deviceConditions.lastTransitionTime)},
      'observed_generation', ${deviceConditions.observedGeneration}) order by ${deviceConditions.type}), '[]'::json)
    from ${deviceConditions} where ${deviceConditions.deviceId} = ${devices.id})`;
  const view = sql`(select row_to_json(v)::text from (select
    ${devices.id} as id, ${devices.name} as name, ${devices.siteId} as site_id, ${devices.rackId} as rack_id,
    ${devices.position}::float8 as position, ${devices.face} as face, ${devices.uHeight}::float8 as u_height,
    ${devices.role} as role, ${devices.vendor} as vendor, ${devices.model} as model, ${devices.platform} as platform,
    ${devices.serial} as serial, ${devices.nodeType} as node_type, ${devices.lifecycleState} as lifecycle_state,
    ${lifecycle} as lifecycle, ${conditions} as conditions,
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

/** A rack's live devices by Fleet lifecycle state, and by the conditions they hold that are not True. */
export interface RackDeviceSummary {
  /** Only the states some device is in, in the lifecycle's order. */
  byLifecycle: Partial<Record<FleetLifecycleState, number>>;
  /** Devices whose condition of a type is False or Unknown, by type (in the condition table's order) and status. */
  conditionsNotTrue: Partial<Record<ConditionType, Partial<Record<Exclude<ConditionStatus, 'True'>, number>>>>;
}

/**
 * The device summary of each rack in `rackIds` (racks without live devices get empty counts), in one statement for
 * a whole list of racks: two grouped counts by devices_rack_id_idx and the conditions' primary key.
 */
export async function rackDeviceSummaries(db: DbOrTx, rackIds: string[]): Promise<Map<string, RackDeviceSummary>> {
  const summaries = new Map<string, RackDeviceSummary>(
    rackIds.map((id) => [id, { byLifecycle: {}, conditionsNotTrue: {} }]),
  );
  if (!rackIds.length) return summaries;
  const ids = sql`${sql.param(rackIds)}::uuid[]`;
  const res = await db.execute<{ rack_id: string; key: string; status: string | null; n: number }>(sql`
    select d.rack_id, d.fleet_lifecycle as key, null as status, count(*)::int as n
      from devices d where d.rack_id = any(${ids}) and d.deleted_at is null
      group by d.rack_id, d.fleet_lifecycle
    union all
    select d.rack_id, c.type, c.status, count(*)::int
      from devices d join device_conditions c on c.device_id = d.id
      where d.rack_id = any(${ids}) and d.deleted_at is null and c.status <> 'True'
      group by d.rack_id, c.type, c.status`);
  const rank = (order: readonly string[], key: string) => order.indexOf(key);
  const rows = [...res.rows].sort(
    (a, b) =>
      rank(fleetLifecycleStates, a.key) - rank(fleetLifecycleStates, b.key) ||
      rank(conditionTypes, a.key) - rank(conditionTypes, b.key) ||
      (a.status ?? '').localeCompare(b.status ?? ''),
  );
  for (const r of rows) {
    const summary = summaries.get(r.rack_id)!;
    if (r.status === null) summary.byLifecycle[r.key as FleetLifecycleState] = r.n;
    else (summary.conditionsNotTrue[r.key as ConditionType] ??= {})[r.status as Exclude<ConditionStatus, 'True'>] = r.n;
  }
  return summaries;
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

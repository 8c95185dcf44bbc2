import { createHash } from 'node:crypto';
import {
  and,
  asc,
  desc,
  eq,
  fillPlaceholders,
  gt,
  inArray,
  isNull,
  or,
  sql,
  type Placeholder,
  type SQL,
} from 'drizzle-orm';
import { PgDialect, type AnyPgColumn } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import {
  conditionTypes,
  fleetLifecycleStates,
  type ConditionStatus,
  type ConditionType,
  type DeviceCondition,
  type FleetLifecycleState,
} from '@fleet/domain';
import type { Db, DbOrTx } from '../client.js';
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
  return db
    .select()
    .from(sites)
    .where(and(isNull(sites.deletedAt), isNull(sites.removedAt)))
    .orderBy(asc(sites.id));
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
  return pageSelect(db, devicePage(q)).limit(q.limit);
}

function pageSelect(db: DbOrTx, page: ReturnType<typeof devicePage>) {
  return db
    .select()
    .from(devices)
    .where(page.where)
    .orderBy(...page.orderBy);
}

/** How a page's values enter its statement: as parameters, or as named placeholders (see deviceJsonListQuery). */
type Bind = <T>(name: string, value: T) => T | Placeholder;
const asValue: Bind = (_name, value) => value;

function devicePage(q: DevicePageQuery, bind: Bind = asValue): { where: SQL | undefined; orderBy: SQL[] } {
  const c: SQL[] = [isNull(devices.deletedAt)];
  for (const [key, values] of Object.entries(q.filters ?? {}) as [keyof DeviceFilters, string[] | undefined][]) {
    if (values?.length)
      c.push(
        inArray(
          deviceFilterColumns[key],
          values.map((v, i) => bind(`${key}.${i}`, v)),
        ),
      );
  }
  if (q.conditions?.length) {
    const anyOf = or(
      ...q.conditions.map((f, i) =>
        and(
          eq(deviceConditions.type, bind(`condition.${i}.type`, f.type)),
          eq(deviceConditions.status, bind(`condition.${i}.status`, f.status)),
        ),
      ),
    );
    // A semi-join: by device_conditions_type_status_device_id_idx when few devices match, else a primary-key probe.
    c.push(sql`exists (select 1 from ${deviceConditions}
      where ${deviceConditions.deviceId} = ${devices.id} and ${anyOf})`);
  }
  const col = deviceSortColumns[q.sort ?? 'name'];
  if (q.after) {
    // A row comparison: the sort's index starts reading at the cursor, where `col > v or (col = v and id > i)` is a
    // filter over every row before it, so each page read all the pages before it again.
    const cmp = sql.raw(q.descending ? '<' : '>');
    c.push(
      sql`(${col}, ${devices.id}) ${cmp} (${bind('after.value', q.after.value)}, ${bind('after.id', q.after.id)})`,
    );
  }
  const dir = q.descending ? desc : asc;
  return { where: and(...c), orderBy: [dir(col), dir(devices.id)] };
}

/** Postgres's SQL dialect, to render a statement to text and parameters. */
export const pgDialect = new PgDialect();

/** A timestamp as JavaScript's Date#toISOString writes it (UTC, milliseconds truncated as pg's Date parsing does). */
const isoText = (column: SQL | AnyPgColumn) =>
  sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A page of listDevicesJson: its devices as JSON texts, and what a keyset cursor after it is made of. */
export interface DeviceJsonPage {
  /** The page's devices in its order, each the JSON text of the API's `Device`. */
  items: string[];
  /** The page's last device when more devices follow it (where the next page starts); created_at as ISO 8601. */
  last?: { id: string; name: string; createdAt: string };
  /** The roles the page's devices hold. */
  roles: (string | null)[];
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
  // One after the other: `db` may be a transaction's single connection.
  const [last] = await db
    .select({ at: deviceTransitions.at })
    .from(deviceTransitions)
    .where(and(eq(deviceTransitions.deviceId, device.id), lastLifecycleMove))
    .orderBy(desc(deviceTransitions.id))
    .limit(1);
  return { lifecycleSince: last?.at ?? device.createdAt, conditions: await listConditions(db, device.id) };
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
 * The page listDevices returns (`q.limit` devices), each device already as the JSON text of the API's `Device` (the
 * hub's deviceView, field for field and in its order, provenance from the `syncScope` sync state): Postgres writes it
 * in the page's own statement, so a list is passed through instead of mapped row by row, viewed and stringified
 * again. Numeric columns go through float8 (`10.50` is `10.5`, as Number() makes it) and timestamps through isoText.
 * The page is cut first (the inner select, the very statement listDevices runs, reading one device more to know
 * whether more follow) so only its rows are turned into JSON. Each device is a row of its own: a page joined into one
 * text (string_agg) cost the backend more than the hub spends on the rows, and gave the hub a 100 KB string to copy
 * (docs/inventory.md "Listing devices").
 */
export async function listDevicesJson(db: Db, q: DevicePageQuery, syncScope: string): Promise<DeviceJsonPage> {
  const { rows } = await db.$client.query<[json: string, role: string | null]>(deviceJsonListQuery(db, q, syncScope));
  const page = rows.length > q.limit ? rows.slice(0, q.limit) : rows;
  const items = page.map((r) => r[0]);
  // The cursor's keys are the last device's own fields: one device parsed, rather than three more columns a row.
  const last =
    rows.length > q.limit ? (JSON.parse(items.at(-1)!) as { id: string; name: string; created_at: string }) : undefined;
  return {
    items,
    ...(last ? { last: { id: last.id, name: last.name, createdAt: last.created_at } } : {}),
    roles: [...new Set(page.map((r) => r[1]))],
  };
}

/**
 * Statements prepared by name: at most this many shapes of the list (page size, which filters and how many values
 * each, sort, cursor), as each stays prepared on every pooled connection at about 0.35 MB of Postgres memory (its
 * parse tree and generic plan); the list's other shapes are sent unnamed.
 */
const MAX_NAMED_LIST_SHAPES = 16;
const jsonListStatements = new Map<string, { name: string; text: string; params: unknown[] }>();

/**
 * The statement listDevicesJson runs, as pg's query config (benches run it): rows of [device JSON, role], as arrays
 * (pg builds no object a row). Its text depends only on the page's
 * shape, so it is built once per shape and sent by name: each connection parses it once, and after five runs
 * Postgres keeps a generic plan where it is estimated no dearer than planning for each run's values (first pages;
 * pages after a cursor are still planned), planning having cost a third of running it. The page size is part of the
 * text, not a parameter: with a parameter a generic plan reckons on a tenth of the table, and is never chosen.
 */
export function deviceJsonListQuery(db: DbOrTx, q: DevicePageQuery, syncScope: string): pg.QueryArrayConfig {
  if (!Number.isSafeInteger(q.limit) || q.limit < 1) throw new RangeError(`page size ${q.limit}`);
  const values: Record<string, unknown> = {};
  // Placeholders carry no column encoder: a Date is sent as drizzle's timestamp columns send it.
  const bind = (name: string, value: unknown): Placeholder => {
    values[name] = value instanceof Date ? value.toISOString() : value;
    return sql.placeholder(name);
  };
  const page = devicePage(q, bind);
  const scope = bind('syncScope', syncScope);
  const shape = `${q.limit} ${q.sort ?? 'name'} ${q.descending ? 'desc' : 'asc'} ${Object.keys(values).join(' ')}`;
  let prepared = jsonListStatements.get(shape);
  if (!prepared) {
    const { sql: text, params } = pgDialect.sqlToQuery(deviceJsonListStatement(db, page, q.limit, scope));
    if (jsonListStatements.size >= MAX_NAMED_LIST_SHAPES)
      return { text, values: fillPlaceholders(params, values), rowMode: 'array' };
    const name = `fleet_device_list_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    prepared = { name, text, params };
    jsonListStatements.set(shape, prepared);
  }
  const { name, text } = prepared;
  return { name, text, values: fillPlaceholders(prepared.params, values), rowMode: 'array' };
}

/** The text of deviceJsonListQuery: a page of `size` devices and the one after it, in the page's order. */
function deviceJsonListStatement(
  db: DbOrTx,
  page: ReturnType<typeof devicePage>,
  size: number,
  scope: Placeholder,
): SQL {
  // The outer order is the inner select's, which the plan keeps without sorting again (the join adds no row).
  return sql`select ${deviceJson} as json, ${devices.role} as role
    from (${pageSelect(db, page)} limit ${sql.raw(String(size + 1))}) as ${devices}
    left join ${syncState} on ${syncState.scope} = ${scope}
    order by ${sql.join(page.orderBy, sql`, `)}`;
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

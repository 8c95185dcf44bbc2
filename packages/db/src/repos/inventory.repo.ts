import { and, asc, desc, eq, gt, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
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
  return db
    .select()
    .from(devices)
    .where(and(...c))
    .orderBy(dir(col), dir(devices.id))
    .limit(q.limit);
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

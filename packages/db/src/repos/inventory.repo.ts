import { and, asc, eq, gt, inArray, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { devices, sites, type Device, type NewDevice, type Site } from '../schema/index.js';

export async function insertSite(db: DbOrTx, site: { id: string; name: string }): Promise<Site> {
  const [row] = await db.insert(sites).values(site).returning();
  return row!;
}

export async function getSite(db: DbOrTx, id: string): Promise<Site | undefined> {
  return db.query.sites.findFirst({ where: eq(sites.id, id) });
}

export async function listSites(db: DbOrTx): Promise<Site[]> {
  return db.select().from(sites).orderBy(asc(sites.id));
}

export async function insertDevice(db: DbOrTx, device: NewDevice): Promise<Device> {
  const [row] = await db.insert(devices).values(device).returning();
  return row!;
}

export async function getDevice(db: DbOrTx, id: string): Promise<Device | undefined> {
  return db.query.devices.findFirst({ where: eq(devices.id, id) });
}

export interface DevicePageQuery {
  limit: number;
  /** Keyset position: the (name, id) of the last row of the previous page. */
  after?: { name: string; id: string };
  siteId?: string[];
}

export async function listDevices(db: DbOrTx, q: DevicePageQuery): Promise<Device[]> {
  const conditions = [];
  if (q.siteId?.length) conditions.push(inArray(devices.siteId, q.siteId));
  if (q.after) {
    conditions.push(
      or(gt(devices.name, q.after.name), and(eq(devices.name, q.after.name), gt(devices.id, q.after.id))),
    );
  }
  return db
    .select()
    .from(devices)
    .where(conditions.length ? and(...conditions) : undefined)
    .orderBy(asc(devices.name), asc(devices.id))
    .limit(q.limit);
}

/** Records observed power states in one statement, never moving a reading back in time. */
export async function recordPowerStates(
  db: DbOrTx,
  readings: { deviceId: string; powerState: string; at: Date }[],
): Promise<void> {
  if (readings.length === 0) return;
  await db.execute(sql`
    update devices d set power_state = r.power_state, power_state_at = r.at, updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(readings.map((r) => ({ id: r.deviceId, power_state: r.powerState, at: r.at.toISOString() })))}::jsonb)
      as r(id uuid, power_state text, at timestamptz)
    where d.id = r.id and (d.power_state_at is null or d.power_state_at <= r.at)`);
}

import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { deviceFirmware, type DeviceFirmware } from '../schema/index.js';

/**
 * Writes the version a finished job verified into its device's row (a switch tray's NVOS build), newest job
 * first: one statement for the whole page of readings, never one per device.
 */
export async function setDeviceFirmwareVersions(
  db: DbOrTx,
  readings: { deviceId: string; version: string; at: Date }[],
): Promise<void> {
  // The newest reading per device wins when one page holds several jobs of one device.
  const newest = new Map<string, { deviceId: string; version: string; at: string }>();
  for (const r of readings) {
    const seen = newest.get(r.deviceId);
    if (!seen || seen.at <= r.at.toISOString())
      newest.set(r.deviceId, { deviceId: r.deviceId, version: r.version, at: r.at.toISOString() });
  }
  if (!newest.size) return;
  await db.execute(sql`
    update devices set firmware_version = r."version", updated_at = now()
    from jsonb_to_recordset(${JSON.stringify([...newest.values()])}::jsonb) as r("deviceId" uuid, "version" text)
    where devices.id = r."deviceId" and devices.firmware_version is distinct from r."version"`);
}

/** The installed versions recorded for a device, one per component, by component id. */
export async function listDeviceFirmware(db: DbOrTx, deviceId: string): Promise<DeviceFirmware[]> {
  return db
    .select()
    .from(deviceFirmware)
    .where(sql`${deviceFirmware.deviceId} = ${deviceId}`)
    .orderBy(deviceFirmware.componentId);
}

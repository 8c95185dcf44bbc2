import { readSnapshot, type Db } from '../client.js';
import { listDeviceFirmware } from './device-versions.repo.js';
import {
  deviceNetwork,
  getDevice,
  getDeviceStatus,
  getRack,
  getSyncState,
  listInventoryIssues,
  rackDevices,
  rackDeviceSummaries,
} from './inventory.repo.js';

/** Open inventory issues a device's detail shows. */
const ISSUES_SHOWN = 100;

/** A device with everything its detail shows, read in one snapshot; undefined when there is no such device. */
export async function readDeviceDetail(db: Db, id: string) {
  return readSnapshot(db, async (tx) => {
    const device = await getDevice(tx, id);
    if (!device) return undefined;
    return {
      device,
      status: await getDeviceStatus(tx, device),
      network: await deviceNetwork(tx, device.id),
      issues: await listInventoryIssues(tx, { deviceId: [device.id], limit: ISSUES_SHOWN }),
      sync: await getSyncState(tx, 'netbox'),
      firmware: await listDeviceFirmware(tx, device.id),
    };
  });
}

/** A rack with its devices (top first), their summary and the sync state, read in one snapshot. */
export async function readRackDetail(db: Db, id: string) {
  return readSnapshot(db, async (tx) => {
    const rack = await getRack(tx, id);
    if (!rack) return undefined;
    const devices = await rackDevices(tx, rack.id);
    const summaries = await rackDeviceSummaries(tx, [rack.id]);
    return { rack, devices, summary: summaries.get(rack.id)!, sync: await getSyncState(tx, 'netbox') };
  });
}

import type { DeviceRow } from '@fleet/db';
import { netboxRoleOf, type PlannedDevice } from './layout.js';

/**
 * A planned device as the NetBox agent mirrors it, for tests and benches that fill Postgres without a NetBox: the
 * caller gives the NetBox ids and the BMC's management profile.
 */
export function mirrorDeviceRow(
  d: PlannedDevice,
  ids: { netboxId: number; siteNetboxId: number; rackNetboxId: number },
  managementProfile: string,
  netboxLastUpdated: string,
): DeviceRow {
  return {
    ...ids,
    name: d.name,
    position: d.position,
    face: 'front',
    uHeight: 1,
    role: netboxRoleOf[d.kind],
    vendor: d.vendor,
    model: d.nodeType,
    platform: null,
    serial: d.serial,
    lifecycleState: 'active',
    nodeType: d.nodeType,
    managementProfile,
    credentialRef: 'bmc/default',
    nvosUrl: null,
    nvosSsh: null,
    nvosCredentialRef: null,
    nvosHostKey: null,
    oobIpNetboxId: null,
    netboxLastUpdated,
  };
}

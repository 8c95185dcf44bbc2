import type { RedfishClient } from './client.js';
import { linkOf, readCollection, rootLink } from './discovery.js';
import { RedfishError } from './errors.js';

/**
 * Where a tray sits in its NVL72 rack, as the GPU/CPU OEM block reports it
 * (docs/reference/rms-behaviours.md#tray-location).
 */
export interface MnnvlinkTopology {
  chassisSerialNumber?: string;
  slotNumber?: number;
  trayIndex?: number;
  /** The processor that reported it. */
  processorUri: string;
  /** The OEM object as read, for fields this type does not name (e.g. SystemGUID). */
  raw: Record<string, unknown>;
}

interface Processor {
  Oem?: { Nvidia?: { MNNVLinkTopology?: Record<string, unknown> } };
}

/**
 * Walks Systems → Processors → each processor and returns the first
 * `Oem.Nvidia.MNNVLinkTopology`. A member that cannot be read is skipped; if none has
 * the block, the first such error is raised (else NotFound).
 */
export async function getMnnvlinkTopology(client: RedfishClient): Promise<MnnvlinkTopology> {
  return client.discovered(async () => {
    let firstError: unknown;
    const systems = await readCollection(client, await rootLink(client, 'Systems'));
    for (const systemUri of systems.members) {
      try {
        const processorsUri = linkOf(await client.get<unknown>(systemUri), 'Processors');
        if (!processorsUri) continue;
        for (const processorUri of (await readCollection(client, processorsUri)).members) {
          try {
            const topology = (await client.get<Processor>(processorUri)).Oem?.Nvidia?.MNNVLinkTopology;
            if (topology && typeof topology === 'object') return toTopology(processorUri, topology);
          } catch (err) {
            firstError ??= err;
          }
        }
      } catch (err) {
        firstError ??= err;
      }
    }
    throw (
      firstError ??
      new RedfishError(
        'NotFound',
        client.bmc,
        '/redfish/v1/Systems',
        'no processor reports Oem.Nvidia.MNNVLinkTopology',
      )
    );
  });
}

function toTopology(processorUri: string, raw: Record<string, unknown>): MnnvlinkTopology {
  const num = (k: string) => (typeof raw[k] === 'number' ? (raw[k] as number) : undefined);
  const serial = raw['ChassisSerialNumber'];
  const slotNumber = num('TraySlotNumber');
  const trayIndex = num('TraySlotIndex');
  return {
    ...(typeof serial === 'string' ? { chassisSerialNumber: serial } : {}),
    ...(slotNumber !== undefined ? { slotNumber } : {}),
    ...(trayIndex !== undefined ? { trayIndex } : {}),
    processorUri,
    raw,
  };
}

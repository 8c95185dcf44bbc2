import type { ResourceStatus } from './chassis.js';
import { compact } from './compact.js';
import type { Link, RedfishClient } from './client.js';
import { linkOf, readCollectionWithBodies, rootLink, trimSlash } from './discovery.js';
import { RedfishError } from './errors.js';

export interface FirmwareComponent {
  uri: string;
  id: string;
  name?: string;
  description?: string;
  version?: string;
  softwareId?: string;
  manufacturer?: string;
  updateable?: boolean;
  status?: ResourceStatus;
  /** The hardware this image runs on (e.g. FW_BMC_0 → /redfish/v1/Chassis/BMC_0). */
  relatedItems: string[];
}

export interface FirmwareInventory {
  components: FirmwareComponent[];
  warnings: string[];
}

export interface UpdateServiceInfo {
  uri: string;
  /** Where multipart pushes go (UpdateParameters + UpdateFile). */
  multipartHttpPushUri?: string;
  httpPushUri?: string;
  simpleUpdateTarget?: string;
  maxImageSizeBytes?: number;
  firmwareInventoryUri?: string;
}

interface RawUpdateService {
  MultipartHttpPushUri?: string;
  HttpPushUri?: string;
  MaxImageSizeBytes?: number;
  FirmwareInventory?: Link;
  Actions?: { '#UpdateService.SimpleUpdate'?: { target?: string } };
}

/**
 * Where the UpdateService takes pushes and keeps its inventory, and the largest image it takes: fixed until the BMC is
 * reset or re-flashed, so kept as discovery keeps links (an update's pushes then read it once, not once each).
 */
export async function getUpdateService(client: RedfishClient): Promise<UpdateServiceInfo> {
  // Kept only whole: a service that does not (yet) name its push URI and inventory is read again next time.
  return client.discovered(() =>
    client.cachedIf(
      updateServiceKey,
      () => readUpdateService(client),
      (s) => s.multipartHttpPushUri !== undefined && s.firmwareInventoryUri !== undefined,
    ),
  );
}

/** Where getUpdateService keeps its answer (pushFirmware asks whether its push URI came from there). */
export const updateServiceKey = 'update-service';

async function readUpdateService(client: RedfishClient): Promise<UpdateServiceInfo> {
  const uri = await rootLink(client, 'UpdateService');
  const raw = await client.get<RawUpdateService>(uri);
  // Typed fields only: a push URI that is not a string must read as absent, not reach the upload.
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const actions = raw.Actions as Record<string, { target?: unknown } | null> | null | undefined;
  return compact<UpdateServiceInfo>({
    uri,
    multipartHttpPushUri: str(raw.MultipartHttpPushUri),
    httpPushUri: str(raw.HttpPushUri),
    simpleUpdateTarget: str(actions?.['#UpdateService.SimpleUpdate']?.target),
    maxImageSizeBytes: typeof raw.MaxImageSizeBytes === 'number' ? raw.MaxImageSizeBytes : undefined,
    firmwareInventoryUri: linkOf(raw, 'FirmwareInventory'),
  });
}

/** Every firmware component once, with the hardware it belongs to. */
export async function getFirmwareInventory(client: RedfishClient): Promise<FirmwareInventory> {
  return client.discovered(async () => {
    const service = await getUpdateService(client);
    if (!service.firmwareInventoryUri) {
      throw new RedfishError('FailedPrecondition', client.bmc, service.uri, 'UpdateService has no FirmwareInventory');
    }
    const { members, warnings, read } = await readCollectionWithBodies(client, service.firmwareInventoryUri);
    const components: FirmwareComponent[] = [];
    for (const uri of members) components.push(toComponent(uri, await read<Record<string, unknown>>(uri)));
    return { components, warnings };
  });
}

const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);

function toComponent(uri: string, c: Record<string, unknown>): FirmwareComponent {
  const str = (k: string) => (typeof c[k] === 'string' ? (c[k] as string) : undefined);
  const related = Array.isArray(c['RelatedItem']) ? (c['RelatedItem'] as Link[]) : [];
  return {
    ...compact<Omit<FirmwareComponent, 'relatedItems'>>({
      uri,
      id: str('Id') ?? uri.slice(uri.lastIndexOf('/') + 1),
      name: str('Name'),
      description: str('Description'),
      version: str('Version'),
      softwareId: str('SoftwareId'),
      manufacturer: str('Manufacturer'),
      updateable: typeof c['Updateable'] === 'boolean' ? c['Updateable'] : undefined,
      status: isObject(c['Status']) ? (c['Status'] as ResourceStatus) : undefined,
    }),
    relatedItems: related
      .map((r) => r?.['@odata.id'])
      .filter((u): u is string => typeof u === 'string')
      .map(trimSlash),
  };
}

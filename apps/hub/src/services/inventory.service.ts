import {
  getDevice,
  getSite,
  insertDevice,
  isUniqueViolation,
  uniqueIndexes,
  type Db,
  type Device,
  type NewDevice,
} from '@fleet/db';
import { missingForOperation } from '@fleet/domain';
import { ApiError, invalid } from '../errors.js';
import { deviceView } from '../views.js';
import { auditAccepted, type Caller } from './caller.js';
import { idempotentCreate, type CreateAnswer } from './idempotent-create.js';
import { checkSites } from './site-scope.js';
import { refuseClosedSites } from './sites.service.js';

type Created = Promise<{ answer: CreateAnswer; replayed: boolean }>;

export type DeviceInput = Pick<
  NewDevice,
  | 'name'
  | 'siteId'
  | 'nodeType'
  | 'bmcUrl'
  | 'credentialRef'
  | 'nvosUrl'
  | 'nvosSsh'
  | 'nvosCredentialRef'
  | 'nvosHostKey'
>;

/** Registers a device by hand in an existing site, its Idempotency-Key honoured; a name taken in the site is a 409. */
export async function createDevice(db: Db, caller: Caller, input: DeviceInput): Created {
  checkSites(caller.actor, [input.siteId], `site/${input.siteId}`, 'body.site_id');
  const site = await getSite(db, input.siteId);
  if (!site || site.removedAt) throw invalid('body.site_id', `site ${input.siteId} does not exist`);
  return idempotentCreate(db, caller, async (tx) => {
    await refuseClosedSites(tx, [input.siteId]);
    const row = await insertDevice(tx, input);
    await auditAccepted(tx, caller, 201, {
      action: 'device.create',
      target: `device/${row.id}`,
      details: { name: row.name },
    });
    // A new device has not moved (it is discovered since its creation) and has no conditions yet.
    const status = { lifecycleSince: row.createdAt, conditions: [] };
    return { status: 201, headers: { location: `/v1/devices/${row.id}` }, body: deviceView(row, status) };
  }).catch((err: unknown) => {
    if (isUniqueViolation(err, uniqueIndexes.deviceName))
      throw new ApiError('ALREADY_EXISTS', `site ${input.siteId} already has a device named ${input.name}`, [
        { field: 'body.name', issue: 'taken' },
      ]);
    throw err;
  });
}

/**
 * The device a device job acts on: it exists, is not deleted from the inventory, and the inventory gives what an
 * operation needs (BMC address, credential reference, node type), else a 404 or a 409 saying what `to` cannot do.
 */
export async function operableDevice(db: Db, id: string, to = 'be operated'): Promise<Device> {
  const device = await getDevice(db, id);
  if (!device) throw new ApiError('NOT_FOUND', `device ${id} does not exist`);
  if (device.deletedAt)
    throw new ApiError('FAILED_PRECONDITION', `device ${device.name} was deleted from the inventory`);
  const missing = missingForOperation(device);
  if (missing.length)
    throw new ApiError(
      'FAILED_PRECONDITION',
      `device ${device.name} cannot ${to}: the inventory gives no ${missing.join(', ')}; see its inventory issues`,
    );
  return device;
}

import { getSite, insertDevice, isUniqueViolation, uniqueIndexes, type Db, type NewDevice } from '@fleet/db';
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

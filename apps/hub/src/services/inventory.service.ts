import {
  getSite,
  insertDevice,
  insertSite,
  isUniqueViolation,
  uniqueIndexes,
  type Db,
  type NewDevice,
} from '@fleet/db';
import { ApiError, invalid } from '../errors.js';
import { deviceView, siteView } from '../views.js';
import { auditAccepted, type Caller } from './caller.js';
import { idempotentCreate, type CreateAnswer } from './idempotent-create.js';
import { checkSites } from './site-scope.js';

type Created = Promise<{ answer: CreateAnswer; replayed: boolean }>;

/** Registers a site by hand, its Idempotency-Key honoured; an id in use is a 409. */
export async function createSite(db: Db, caller: Caller, input: { id: string; name: string }): Created {
  return idempotentCreate(db, caller, async (tx) => {
    if (await getSite(tx, input.id))
      throw new ApiError('ALREADY_EXISTS', `site ${input.id} already exists`, [{ field: 'body.id', issue: 'taken' }]);
    const row = await insertSite(tx, input);
    await auditAccepted(tx, caller, 201, { action: 'site.create', target: `site/${row.id}` });
    return { status: 201, headers: { location: `/v1/sites/${row.id}` }, body: siteView(row) };
  });
}

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
  if (!(await getSite(db, input.siteId))) throw invalid('body.site_id', `site ${input.siteId} does not exist`);
  return idempotentCreate(db, caller, async (tx) => {
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

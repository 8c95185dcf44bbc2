import {
  deleteFirmwareManifest,
  insertFirmwareManifest,
  isUniqueViolation,
  lockFirmwareManifest,
  makeDefaultFirmwareManifest,
  uniqueIndexes,
  updateFirmwareManifest,
  type Db,
  type DbOrTx,
  type FirmwareManifest,
} from '@fleet/db';
import type { ManifestStep } from '@fleet/domain';
import { ApiError, notFound } from '../errors.js';
import { checkManifestSteps } from '../firmware/manifest-checks.js';
import { checkIfMatch, etag } from '../firmware/preconditions.js';
import { manifestView } from '../firmware/views.js';
import { auditAccepted, type Caller } from './caller.js';
import { idempotentCreate, type CreateAnswer } from './idempotent-create.js';

export interface ManifestInput {
  name: string;
  hardwareType: string;
  steps: ManifestStep[];
}

/** A write to a manifest: its id and the If-Match the request sent (none: no condition). */
export interface ManifestRef {
  id: string;
  ifMatch: string | string[] | undefined;
}

/** The 409 for a name another manifest has. */
const nameTaken = (name: string) => (err: unknown) => {
  if (isUniqueViolation(err, uniqueIndexes.manifestName))
    throw new ApiError('ALREADY_EXISTS', `a manifest named ${name} exists already`, [
      { field: 'body.name', issue: 'taken' },
    ]);
  throw err;
};

/** The manifest locked until the transaction ends, once If-Match holds. */
async function lockedManifest(tx: DbOrTx, ref: ManifestRef): Promise<FirmwareManifest> {
  const m = await lockFirmwareManifest(tx, ref.id);
  if (!m) throw notFound('firmware manifest', ref.id);
  checkIfMatch(ref.ifMatch, etag(m.revision));
  return m;
}

/** Creates a manifest (the default of its type when asked), its Idempotency-Key honoured. */
export async function createManifest(
  db: Db,
  caller: Caller,
  input: ManifestInput & { isDefault: boolean },
): Promise<{ answer: CreateAnswer; replayed: boolean }> {
  return idempotentCreate(db, caller, async (tx) => {
    await checkManifestSteps(tx, input.steps);
    const row = await insertFirmwareManifest(tx, { ...input, createdBy: caller.actor.name });
    await auditAccepted(tx, caller, 201, {
      action: 'firmware.manifest.create',
      target: `firmware_manifest/${row.id}`,
      details: { name: row.name, hardware_type: row.hardwareType, default: row.isDefault },
    });
    return {
      status: 201,
      headers: { location: `/v1/firmware/manifests/${row.id}`, etag: etag(row.revision) },
      body: manifestView(row),
    };
  }).catch(nameTaken(input.name));
}

/** Replaces a manifest's fields; the default of a type cannot move to another type. */
export async function replaceManifest(
  db: Db,
  caller: Caller,
  ref: ManifestRef,
  input: ManifestInput,
): Promise<FirmwareManifest> {
  return db
    .transaction(async (tx) => {
      const current = await lockedManifest(tx, ref);
      if (current.isDefault && current.hardwareType !== input.hardwareType) {
        throw new ApiError(
          'FAILED_PRECONDITION',
          `manifest ${current.name} is the default for ${current.hardwareType}; make another manifest ` +
            `the default before moving it to ${input.hardwareType}`,
        );
      }
      await checkManifestSteps(tx, input.steps);
      const row = await updateFirmwareManifest(tx, current.id, input);
      await auditAccepted(tx, caller, 200, {
        action: 'firmware.manifest.update',
        target: `firmware_manifest/${row.id}`,
        details: { revision: row.revision },
      });
      return row;
    })
    .catch(nameTaken(input.name));
}

/** Makes a manifest its type's default; the previous default stops being one in the same transaction. */
export async function makeDefaultManifest(db: Db, caller: Caller, ref: ManifestRef): Promise<FirmwareManifest> {
  return db.transaction(async (tx) => {
    const row = await makeDefaultFirmwareManifest(tx, await lockedManifest(tx, ref));
    await auditAccepted(tx, caller, 200, {
      action: 'firmware.manifest.default',
      target: `firmware_manifest/${row.id}`,
      details: { hardware_type: row.hardwareType },
    });
    return row;
  });
}

export async function deleteManifest(db: Db, caller: Caller, ref: ManifestRef): Promise<void> {
  await db.transaction(async (tx) => {
    const m = await lockedManifest(tx, ref);
    await deleteFirmwareManifest(tx, m.id);
    await auditAccepted(tx, caller, 204, {
      action: 'firmware.manifest.delete',
      target: `firmware_manifest/${m.id}`,
      details: { name: m.name, default: m.isDefault },
    });
  });
}

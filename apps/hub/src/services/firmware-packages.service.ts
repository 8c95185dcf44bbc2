import {
  deleteFirmwarePackage,
  getFirmwarePackageByDigest,
  insertFirmwarePackage,
  manifestsUsingPackage,
  type Db,
  type FirmwarePackage,
} from '@fleet/db';
import type { PackageFormat } from '@fleet/domain';
import { ApiError, notFound } from '../errors.js';
import type { ReceivedPackage } from '../firmware/package-upload.js';
import { checkIfMatch, etag } from '../firmware/preconditions.js';
import { auditAccepted, type Caller } from './caller.js';

/**
 * Catalogs a package whose bytes are stored, with its audit row; the same bytes catalogued already are that package
 * again (`created` false).
 */
export async function catalogPackage(
  db: Db,
  caller: Caller,
  upload: { received: ReceivedPackage; fileName: string; format: PackageFormat },
): Promise<{ pkg: FirmwarePackage; created: boolean }> {
  const { received, fileName, format } = upload;
  return db.transaction(async (tx) => {
    const inserted = await insertFirmwarePackage(tx, {
      digest: received.digest,
      sizeBytes: received.size,
      fileName,
      format,
      packageVersion: received.packageVersion,
      metadata: received.metadata,
      uploadedBy: caller.actor.name,
    });
    const row = inserted ?? (await getFirmwarePackageByDigest(tx, received.digest))!;
    await auditAccepted(tx, caller, inserted ? 201 : 200, {
      action: 'firmware.package.upload',
      target: `firmware_package/${row.id}`,
      details: {
        digest: row.digest,
        size_bytes: row.sizeBytes,
        file_name: fileName,
        format,
        already_stored: !inserted,
      },
    });
    return { pkg: row, created: inserted !== undefined };
  });
}

/**
 * Removes a package from the catalog (If-Match honoured), refused while a manifest uses it; the caller deletes its
 * bytes once this committed.
 */
export async function uncatalogPackage(
  db: Db,
  caller: Caller,
  input: { id: string; ifMatch: string | string[] | undefined },
): Promise<FirmwarePackage> {
  return db.transaction(async (tx) => {
    // Deleting first takes the row lock that manifest writes wait on, so the usage check below sees them all.
    const row = await deleteFirmwarePackage(tx, input.id);
    if (!row) throw notFound('firmware package', input.id);
    checkIfMatch(input.ifMatch, etag(row.digest));
    const users = await manifestsUsingPackage(tx, row.id);
    if (users.length)
      throw new ApiError(
        'FAILED_PRECONDITION',
        `package ${row.fileName} is used by manifest ${users.join(', ')}; change or delete those manifests first`,
      );
    await auditAccepted(tx, caller, 204, {
      action: 'firmware.package.delete',
      target: `firmware_package/${row.id}`,
      details: { digest: row.digest, file_name: row.fileName },
    });
    return row;
  });
}

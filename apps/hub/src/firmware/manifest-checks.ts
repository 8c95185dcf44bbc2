import { lockFirmwarePackages, type DbOrTx } from '@fleet/db';
import { isNvosImage, type ManifestStep } from '@fleet/domain';
import { ApiError } from '../errors.js';

/**
 * Checks a manifest's steps against the catalog, inside the transaction that stores it (the
 * packages stay locked against deletion until it commits): every package exists, and every
 * component version a step promises is one of its package's image versions. Component ids
 * are Redfish FirmwareInventory ids, which a PLDM package does not carry, so only versions are
 * compared. 400 listing every problem, by body field.
 */
export async function checkManifestSteps(tx: DbOrTx, steps: ManifestStep[]): Promise<void> {
  const packages = new Map(
    (await lockFirmwarePackages(tx, [...new Set(steps.map((s) => s.packageId))])).map((p) => [p.id, p]),
  );
  const details: { field: string; issue: string }[] = [];
  steps.forEach((step, i) => {
    const pkg = packages.get(step.packageId);
    if (!pkg) {
      details.push({ field: `body.steps.${i}.package_id`, issue: `package ${step.packageId} does not exist` });
      return;
    }
    if (isNvosImage(pkg.metadata)) {
      details.push({
        field: `body.steps.${i}.package_id`,
        issue:
          `package ${pkg.fileName} is an NVOS image, not a PLDM package; install it with POST ` +
          `/v1/devices/{id}/nvos-install`,
      });
      return;
    }
    const versions = new Set(pkg.metadata.components.map((c) => c.version));
    step.components.forEach((component, j) => {
      if (!versions.has(component.version)) {
        details.push({
          field: `body.steps.${i}.components.${j}.version`,
          issue:
            `${component.id} version ${component.version} is not in package ${pkg.fileName}, whose images ` +
            `are versions ${[...versions].join(', ') || '(none)'}`,
        });
      }
    });
  });
  if (details.length)
    throw new ApiError('INVALID_ARGUMENT', details.map((d) => `${d.field}: ${d.issue}`).join('; '), details);
}

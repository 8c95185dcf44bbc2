/**
 * NVOS refuses other names; RMS applies the same rule before uploading
 * (docs/reference/rms-behaviours.md#nvos-image-names).
 */
const allowed = /^[A-Za-z0-9._-]+$/;

/** Throws RangeError unless `name` is a plain file name NVOS accepts: `[A-Za-z0-9._-]`, not hidden. */
export function assertImageFilename(name: string): void {
  if (!allowed.test(name))
    throw new RangeError(`file name ${JSON.stringify(name)} may contain only letters, digits, '.', '_' and '-'`);
  if (name.startsWith('.')) throw new RangeError(`file name ${JSON.stringify(name)} is hidden`);
}

/**
 * The NVOS build id an image will report, from its name: exactly one X.Y.Z (`nvos-amd64-25.02.4282.bin` →
 * `25.02.4282`).
 */
export function buildIdFromFilename(name: string): string {
  assertImageFilename(name);
  const found = name.match(/\d+\.\d+\.\d+/g) ?? [];
  if (found.length !== 1)
    throw new RangeError(`cannot tell the build id of ${name}: expected exactly one X.Y.Z, found ${found.length}`);
  return found[0]!;
}

export type FwpkgErrorCode =
  /** The bytes end before the structure does; `needBytes` says how many a retry needs. */
  | 'truncated'
  /** PackageHeaderIdentifier is not a DSP0267 1.0–1.3 UUID. */
  | 'unsupported_revision'
  /** A field holds a value DSP0267 does not allow, or lengths that contradict each other. */
  | 'bad_field'
  | 'checksum_mismatch'
  /** A field points outside the header or the file. */
  | 'out_of_bounds';

/**
 * Every problem with a package's bytes. `field` is the DSP0267 field name and `offset` the
 * byte offset in the package where it was found, so an operator can look at the bytes.
 */
export class FwpkgError extends Error {
  override readonly name = 'FwpkgError';

  constructor(
    readonly code: FwpkgErrorCode,
    readonly field: string,
    readonly offset: number,
    detail: string,
    /** For `truncated`: bytes of prefix a retry needs (the header size once it is known). */
    readonly needBytes?: number,
  ) {
    super(`${field} at byte ${offset}: ${detail}`);
  }
}

/** A checksum as error messages print it. */
export const hex32 = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`;

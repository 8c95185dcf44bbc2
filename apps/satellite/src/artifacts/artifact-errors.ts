/**
 * Why an artifact could not be made available:
 * - config: the satellite has no hub, or its hub token reference does not resolve;
 * - invalid: the caller asked for something that cannot be a blob (bad digest or size);
 * - not_found / unauthorized: the hub answered 404 / 401 or 403;
 * - size_mismatch: the hub's blob is not the size the catalog says;
 * - digest_mismatch: the bytes received do not hash to the digest (the partial file is gone);
 * - unavailable: the hub could not be reached, failed (5xx) or the transfer broke off.
 */
export type ArtifactFailureReason =
  'config' | 'invalid' | 'not_found' | 'unauthorized' | 'size_mismatch' | 'digest_mismatch' | 'unavailable';

const retryable = new Set<ArtifactFailureReason>(['digest_mismatch', 'unavailable']);

export class ArtifactFetchError extends Error {
  override readonly name = 'ArtifactFetchError';
  /** The HTTP status the hub answered, if it did. */
  readonly status: number | undefined;

  constructor(
    readonly reason: ArtifactFailureReason,
    readonly digest: string,
    /** The blob URL asked, when a request was made. */
    readonly url: string | undefined,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(
      `artifact ${digest}: ${message}${url ? ` (${url})` : ''}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.status = options?.status;
  }

  /** Whether another attempt (which resumes from what is on disk) may succeed. */
  get retryable(): boolean {
    return retryable.has(this.reason);
  }
}

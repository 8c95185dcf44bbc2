/**
 * How a Redfish call failed. `Internal` is the BMC failing (a 5xx); `Protocol` is the BMC answering with what is not
 * Redfish (not JSON, not a resource, a field of the wrong shape, a link off the BMC, an answer over the size limit):
 * it answered, but unreadably (docs/simulators.md#answered-but-unreadable).
 */
export type RedfishErrorCode =
  | 'NotFound'
  | 'InvalidArgument'
  | 'Unauthenticated'
  | 'Timeout'
  | 'Unavailable'
  | 'FailedPrecondition'
  | 'Internal'
  | 'Protocol';

/** A failed Redfish call, naming the BMC, the URI and the cause. */
export class RedfishError extends Error {
  constructor(
    readonly code: RedfishErrorCode,
    readonly bmc: string,
    readonly uri: string,
    readonly causeText: string,
    readonly status?: number,
  ) {
    super(`${code}: ${bmc} ${uri}: ${causeText}`);
    this.name = 'RedfishError';
  }

  /** Worth another try later: the BMC may answer once it is back. */
  get retryable(): boolean {
    return this.code === 'Timeout' || this.code === 'Unavailable';
  }
}

export function codeForStatus(status: number): RedfishErrorCode {
  if (status === 400 || status === 405 || status === 413 || status === 415) return 'InvalidArgument';
  if (status === 401 || status === 403) return 'Unauthenticated';
  if (status === 404 || status === 410) return 'NotFound';
  // 412: the If-Match ETag no longer matches; the caller must re-read before writing.
  if (status === 409 || status === 412) return 'FailedPrecondition';
  if (status === 408 || status === 504) return 'Timeout';
  if (status === 503 || status === 502 || status === 429) return 'Unavailable';
  return 'Internal';
}

/** The human message out of a Redfish error body, if it has one. */
export function messageFromBody(body: unknown): string | undefined {
  const err = (body as { error?: { message?: unknown; '@Message.ExtendedInfo'?: unknown } } | null | undefined)?.error;
  const info = err?.['@Message.ExtendedInfo'];
  const first: unknown = Array.isArray(info) ? (info[0] as { Message?: unknown } | null)?.Message : undefined;
  const text = [first, err?.message].find((m) => typeof m === 'string' && m.length > 0);
  return text as string | undefined;
}

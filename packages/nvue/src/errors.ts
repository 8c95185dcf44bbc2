export type NvueErrorKind =
  /** No answer or 502/503: connection refused, reset, DNS, the switch rebooting. */
  | 'Unavailable'
  /** No complete answer in time (or 504). */
  | 'Timeout'
  | 'Unauthenticated'
  | 'Forbidden'
  | 'NotFound'
  | 'InvalidArgument'
  | 'Conflict'
  /** The switch's certificate was refused by the client's TLS policy. */
  | 'TlsVerification'
  /** A revision ended failed/error/invalid; `issues` holds its transition issues. */
  | 'ApplyFailed'
  /** An action ended action_error/action_failed; `issues` holds its detail and issues. */
  | 'ActionFailed'
  /** The switch answered something the client cannot read (no action id, unknown shape). */
  | 'Protocol'
  | 'Internal';

/** A failed NVUE call, naming the switch, the request and the cause. */
export class NvueError extends Error {
  readonly status: number | undefined;
  readonly issues: string[];

  constructor(
    readonly kind: NvueErrorKind,
    readonly switchId: string,
    readonly method: string,
    readonly uri: string,
    readonly causeText: string,
    opts: { status?: number; issues?: string[]; cause?: unknown } = {},
  ) {
    super(
      `${kind}: ${switchId} ${method} ${uri}: ${causeText}${opts.status ? ` (HTTP ${opts.status})` : ''}`,
      opts.cause === undefined ? undefined : { cause: opts.cause },
    );
    this.name = 'NvueError';
    this.status = opts.status;
    this.issues = opts.issues ?? [];
  }

  /**
   * Worth trying again later: connection refused, reset, DNS failure, timeout, 502/503/504.
   * These are what a switch shows while it reboots (docs/reference/rms-behaviours.md#switch-reboots).
   */
  get retryable(): boolean {
    return this.kind === 'Unavailable' || this.kind === 'Timeout';
  }
}

/** True for failures a caller waiting out a reboot should ride over. */
export function isRetryableDuringReboot(err: unknown): boolean {
  return err instanceof NvueError && err.retryable;
}

export function kindForStatus(status: number): NvueErrorKind {
  if (status === 400 || status === 405 || status === 413 || status === 415 || status === 422) return 'InvalidArgument';
  if (status === 401) return 'Unauthenticated';
  if (status === 403) return 'Forbidden';
  if (status === 404 || status === 410) return 'NotFound';
  if (status === 409 || status === 412) return 'Conflict';
  if (status === 408 || status === 504) return 'Timeout';
  if (status === 502 || status === 503 || status === 429) return 'Unavailable';
  return 'Internal';
}

/** The human text of an NVUE error body: problem+json `detail`/`title`, a `message`, or plain text. */
export function messageFromBody(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim() || undefined;
  const b = body as { detail?: unknown; title?: unknown; message?: unknown } | undefined;
  const text = [b?.detail, b?.message, b?.title].find((v) => typeof v === 'string' && v.length > 0);
  return text as string | undefined;
}

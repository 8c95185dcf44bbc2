/** One entry of the `errors` array slurmrestd answers with (submit says error_code, job calls error_number). */
export interface SlurmApiError {
  code: number | undefined;
  error: string | undefined;
  description: string | undefined;
  source: string | undefined;
}

/** Slurm's own error numbers (slurm_errno.h) that callers branch on. */
export const slurmErrno = {
  /** ESLURM_INVALID_PARTITION_NAME: the job names a partition the cluster does not have. */
  invalidPartition: 2000,
  /** ESLURM_INVALID_JOB_ID: no such job (never existed, or purged after MinJobAge). */
  invalidJobId: 2017,
  /** ESLURM_ENVIRONMENT_MISSING: a submit without `environment`. */
  environmentMissing: 2127,
} as const;

export type SlurmErrorKind =
  /** No answer: connection refused or reset, DNS. */
  | 'Unavailable'
  /** No complete answer in time. */
  | 'Timeout'
  /** 401: missing or refused user name / token headers. */
  | 'Unauthenticated'
  /** No such job. */
  | 'NotFound'
  /** slurmrestd refused the request as malformed (400), e.g. a submit without environment. */
  | 'InvalidArgument'
  /** The job names a partition the cluster does not have (HTTP 500, slurm error 2000). */
  | 'InvalidPartition'
  /** An answer the client cannot read: not JSON, an unexpected shape, an unknown path (wrong API version). */
  | 'Protocol'
  /**
   * Any other failure slurm reports. A refused JWT and an unreachable slurmctld both land here: slurmrestd
   * answers both with HTTP 500 and error number -1.
   */
  | 'Internal';

/** A failed slurmrestd call, naming the request and the cause (HTTP status, slurm's errors). */
export class SlurmError extends Error {
  readonly status: number | undefined;
  readonly slurmErrors: SlurmApiError[];

  constructor(
    readonly kind: SlurmErrorKind,
    readonly method: string,
    readonly url: string,
    readonly causeText: string,
    opts: { status?: number; slurmErrors?: SlurmApiError[]; cause?: unknown } = {},
  ) {
    super(
      `${kind}: ${method} ${url}: ${causeText}${opts.status ? ` (HTTP ${opts.status})` : ''}`,
      opts.cause === undefined ? undefined : { cause: opts.cause },
    );
    this.name = 'SlurmError';
    this.status = opts.status;
    this.slurmErrors = opts.slurmErrors ?? [];
  }

  /** Slurm's error number of the first error that has one (2000 for a bad partition). */
  get errorCode(): number | undefined {
    return this.slurmErrors.find((e) => e.code !== undefined)?.code;
  }

  /** Worth asking again later: the request did not get an answer. */
  get retryable(): boolean {
    return this.kind === 'Unavailable' || this.kind === 'Timeout';
  }
}

export function kindFor(status: number, slurmErrors: SlurmApiError[]): SlurmErrorKind {
  const codes = new Set(slurmErrors.map((e) => e.code));
  if (codes.has(slurmErrno.invalidPartition)) return 'InvalidPartition';
  if (codes.has(slurmErrno.invalidJobId)) return 'NotFound';
  if (status === 401 || status === 403) return 'Unauthenticated';
  // slurmrestd answers 404 only for a path it does not serve: a wrong base URL or a plugin other than v0.0.38.
  if (status === 404) return 'Protocol';
  if (status === 400 || status === 413 || status === 415 || status === 422) return 'InvalidArgument';
  if (status === 502 || status === 503) return 'Unavailable';
  if (status === 504) return 'Timeout';
  return 'Internal';
}

/** "Invalid partition name specified (slurm error 2000)"; the description is added when it says more. */
export function describeSlurmErrors(errors: SlurmApiError[]): string | undefined {
  const parts = errors.map((e) => {
    const text = [e.error, e.description].filter((t) => t && t.length > 0).join(': ');
    return `${text || 'unnamed error'}${e.code !== undefined ? ` (slurm error ${e.code})` : ''}`;
  });
  return parts.length > 0 ? parts.join('; ') : undefined;
}

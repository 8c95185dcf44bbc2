import {
  AxisWriterRefused,
  ConditionReportInvalid,
  httpStatusFor,
  LifecycleTransitionRefused,
  type ErrorCode,
  type ErrorDetail,
} from '@fleet/domain';

/** An error the API answers with as-is: its code, message and details reach the client. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'ApiError';
  }
  get status(): number {
    return httpStatusFor[this.code];
  }
}

export const notFound = (what: string, id: string) => new ApiError('NOT_FOUND', `${what} ${id} does not exist`);
export const invalid = (field: string, issue: string) =>
  new ApiError('INVALID_ARGUMENT', `${field}: ${issue}`, [{ field, issue }]);

/**
 * A refusal of @fleet/domain's device status rules (docs/lifecycle.md) as the API answers it, by the taxonomy code the
 * error carries: a move the lifecycle table refuses is CONFLICT (409; the message names the current state and where it
 * may move), a malformed condition report INVALID_ARGUMENT (400), and a write by a component that does not own the
 * axis PERMISSION_DENIED (403: never the client's doing, so the error handler also logs it as a bug). Undefined for
 * any other error. Routes that write the lifecycle or conditions let these errors propagate.
 */
export function domainRefusal(err: unknown): ApiError | undefined {
  if (
    err instanceof LifecycleTransitionRefused ||
    err instanceof AxisWriterRefused ||
    err instanceof ConditionReportInvalid
  )
    return new ApiError(err.code, err.message);
  return undefined;
}

import type { ErrorCode, ErrorDetail } from '@fleet/domain';
import { ApiError } from '../errors.js';

/** An ApiError answered with an HTTP status other than its code's usual one (412, 413, 416). */
export class HttpStatusError extends ApiError {
  constructor(
    private readonly httpStatus: number,
    code: ErrorCode,
    message: string,
    details?: ErrorDetail[],
  ) {
    super(code, message, details);
  }

  override get status(): number {
    return this.httpStatus;
  }
}

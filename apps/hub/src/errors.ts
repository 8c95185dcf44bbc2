import { httpStatusFor, type ErrorCode, type ErrorDetail } from '@fleet/domain';

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

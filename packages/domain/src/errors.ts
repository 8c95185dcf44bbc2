import { z } from 'zod';

/** Error codes shared by the API, jobs and activities (RMS ErrorCode names). */
export const errorCodes = [
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'CONFLICT',
  'INVALID_ARGUMENT',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'FAILED_PRECONDITION',
  'UNAVAILABLE',
  'DEADLINE_EXCEEDED',
  'RESOURCE_EXHAUSTED',
  'INTERNAL',
] as const;
export const ErrorCode = z.enum(errorCodes);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const httpStatusFor: Record<ErrorCode, number> = {
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  CONFLICT: 409,
  INVALID_ARGUMENT: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  FAILED_PRECONDITION: 409,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
};

export interface ErrorDetail {
  field?: string;
  issue: string;
}

/** The body every failing hub request answers with. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[] };
}

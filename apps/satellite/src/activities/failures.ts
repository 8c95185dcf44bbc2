import { ApplicationFailure } from '@temporalio/common';
import { RedfishError, type RedfishErrorCode } from '@fleet/redfish';
import { UnsupportedNodeTypeError, UnsupportedOperationError } from '@fleet/drivers';
import { UnknownCredentialError } from '../secrets/index.js';

const codeFor: Record<RedfishErrorCode, string> = {
  NotFound: 'NOT_FOUND',
  InvalidArgument: 'INVALID_ARGUMENT',
  Unauthenticated: 'UNAUTHENTICATED',
  Timeout: 'DEADLINE_EXCEEDED',
  Unavailable: 'UNAVAILABLE',
  FailedPrecondition: 'FAILED_PRECONDITION',
  Internal: 'INTERNAL',
};

/**
 * Activity errors as ApplicationFailures whose type is the job error code; the
 * workflow's retry policy lists which codes are never worth another attempt.
 */
export function toActivityFailure(err: unknown, deviceId: string): unknown {
  if (err instanceof RedfishError) {
    return ApplicationFailure.create({
      type: codeFor[err.code],
      message: err.message,
      details: [{ deviceId, bmc: err.bmc, uri: err.uri, status: err.status ?? null }],
      nonRetryable: !err.retryable && err.code !== 'Internal',
    });
  }
  if (err instanceof UnknownCredentialError || err instanceof UnsupportedNodeTypeError || err instanceof UnsupportedOperationError) {
    return ApplicationFailure.create({ type: 'FAILED_PRECONDITION', message: `${deviceId}: ${err.message}`, details: [{ deviceId }], nonRetryable: true });
  }
  return err;
}

/** A per-device failure as data, for results that report devices one by one. */
export function failureSummary(err: unknown, deviceId: string): { type: string; message: string } {
  const f = toActivityFailure(err, deviceId);
  if (f instanceof ApplicationFailure) return { type: f.type ?? 'INTERNAL', message: f.message };
  return { type: 'INTERNAL', message: f instanceof Error ? f.message : String(f) };
}

import { ApplicationFailure } from '@temporalio/common';
import { RedfishError, type RedfishErrorCode } from '@fleet/redfish';
import { UnsupportedNodeTypeError, UnsupportedOperationError } from '@fleet/drivers';
import { NvueError, type NvueErrorKind } from '@fleet/nvue';
import { SshError, type SshErrorKind } from '@fleet/ssh';
import { UnknownCredentialError } from '../secrets/index.js';
import { CertificateMaterialError } from '../switch/cert-material.js';

const codeFor: Record<RedfishErrorCode, string> = {
  NotFound: 'NOT_FOUND',
  InvalidArgument: 'INVALID_ARGUMENT',
  Unauthenticated: 'UNAUTHENTICATED',
  Timeout: 'DEADLINE_EXCEEDED',
  Unavailable: 'UNAVAILABLE',
  FailedPrecondition: 'FAILED_PRECONDITION',
  Internal: 'INTERNAL',
  Protocol: 'INTERNAL',
};

const nvueCodeFor: Record<NvueErrorKind, string> = {
  Unavailable: 'UNAVAILABLE',
  Timeout: 'DEADLINE_EXCEEDED',
  Unauthenticated: 'UNAUTHENTICATED',
  Forbidden: 'PERMISSION_DENIED',
  NotFound: 'NOT_FOUND',
  InvalidArgument: 'INVALID_ARGUMENT',
  Conflict: 'CONFLICT',
  TlsVerification: 'FAILED_PRECONDITION',
  ApplyFailed: 'NVUE_APPLY_FAILED',
  ActionFailed: 'NVUE_ACTION_FAILED',
  Protocol: 'INTERNAL',
  Internal: 'INTERNAL',
};

const sshCodeFor: Record<SshErrorKind, string> = {
  Connect: 'UNAVAILABLE',
  Timeout: 'DEADLINE_EXCEEDED',
  Auth: 'UNAUTHENTICATED',
  HostKeyMismatch: 'HOST_KEY_MISMATCH',
  Exec: 'INTERNAL',
  Sftp: 'INTERNAL',
  Stall: 'SFTP_STALL',
  LocalFile: 'INTERNAL',
  Closed: 'UNAVAILABLE',
};

/**
 * Activity errors as ApplicationFailures whose type is the job error code; the
 * workflow's retry policy lists which codes are never worth another attempt.
 * Device client errors already name the device, the URI or step, and the cause, never a secret.
 */
export function toActivityFailure(err: unknown, deviceId: string): unknown {
  if (err instanceof NvueError) {
    return ApplicationFailure.create({
      type: nvueCodeFor[err.kind],
      message: err.message,
      details: [{ deviceId, uri: err.uri, status: err.status ?? null, issues: err.issues }],
      // A busy switch (409) or one that answered oddly may do better on the next attempt.
      nonRetryable: !err.retryable && !['Conflict', 'Protocol', 'Internal'].includes(err.kind),
    });
  }
  if (err instanceof SshError) {
    return ApplicationFailure.create({
      type: sshCodeFor[err.kind],
      message: err.message,
      details: [{ deviceId, host: err.host, step: err.step }],
      nonRetryable: err.kind === 'Auth' || err.kind === 'HostKeyMismatch',
    });
  }
  if (err instanceof RedfishError) {
    return ApplicationFailure.create({
      type: codeFor[err.code],
      message: err.message,
      details: [{ deviceId, bmc: err.bmc, uri: err.uri, status: err.status ?? null }],
      nonRetryable: !err.retryable && err.code !== 'Internal' && err.code !== 'Protocol',
    });
  }
  if (
    err instanceof UnknownCredentialError ||
    err instanceof UnsupportedNodeTypeError ||
    err instanceof UnsupportedOperationError ||
    err instanceof CertificateMaterialError
  ) {
    return ApplicationFailure.create({
      type: 'FAILED_PRECONDITION',
      message: `${deviceId}: ${err.message}`,
      details: [{ deviceId }],
      nonRetryable: true,
    });
  }
  return err;
}

/** A per-device failure as data, for results that report devices one by one. */
export function failureSummary(err: unknown, deviceId: string): { type: string; message: string } {
  const f = toActivityFailure(err, deviceId);
  if (f instanceof ApplicationFailure) return { type: f.type ?? 'INTERNAL', message: f.message };
  return { type: 'INTERNAL', message: f instanceof Error ? f.message : String(f) };
}

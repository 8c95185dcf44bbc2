import { ApplicationFailure } from '@temporalio/common';
import { toActivityFailure } from '../activities/failures.js';
import { CertificateMaterialError } from './cert-material.js';
import { SecretStoreReadOnlyError } from '../credentials/secret-writer.js';

/**
 * A failure no retry can mend (bad input, missing site material, a switch not doing what it said), naming the device.
 */
export function permanentFailure(
  type: 'INVALID_ARGUMENT' | 'FAILED_PRECONDITION' | 'VERIFICATION_FAILED',
  deviceId: string,
  message: string,
  details: Record<string, unknown> = {},
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message: `${deviceId}: ${message}`,
    details: [{ deviceId, ...details }],
    nonRetryable: true,
  });
}

/** toActivityFailure, plus the satellite-side causes of switch operations. */
export function switchFailure(err: unknown, deviceId: string): unknown {
  if (err instanceof SecretStoreReadOnlyError || err instanceof CertificateMaterialError)
    return permanentFailure('FAILED_PRECONDITION', deviceId, err.message);
  return toActivityFailure(err, deviceId);
}

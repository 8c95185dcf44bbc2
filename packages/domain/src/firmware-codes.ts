import type { FirmwareResultCode } from './firmware.js';

// Zod-free, so the satellite's activities and the workflows (through workflow-safe) share one mapping.
/** RMS error code for an activity failure's type (the activity's own typed failures pass through). */
export function firmwareCodeFor(type: string | undefined): FirmwareResultCode {
  switch (type) {
    case 'TARGET_NOT_FOUND':
    case 'CLIENT_FAILURE':
    case 'UPDATE_IN_PROGRESS':
    case 'ACTIVATION_FAILED':
    case 'NO_TASK_INFO':
      return type;
    case 'UNAVAILABLE':
    case 'INTERNAL':
      return 'SERVER_ERROR';
    case 'DEADLINE_EXCEEDED':
      return 'MONITORING_TIMEOUT';
    case 'UNAUTHENTICATED':
    case 'INVALID_ARGUMENT':
      return 'CLIENT_FAILURE';
    default:
      return 'EXCEPTION';
  }
}

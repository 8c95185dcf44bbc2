import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { FirmwareResultCode, SwitchFirmwareComponent, SwitchFirmwareStep } from '@fleet/domain';

/** nvfwupd's switch order (test-peers item 4): BMC, ERoT, FPGA; then CPLD and BIOS. */
const rank: Record<SwitchFirmwareComponent, number> = { bmc: 0, erot: 1, fpga: 2, cpld1: 3, bios: 4 };

/** The steps in install order; a step for an unknown component, or a component named twice, is refused. */
export function inSwitchOrder(steps: SwitchFirmwareStep[]): SwitchFirmwareStep[] {
  const names = steps.map((s) => s.name);
  const bad = names.filter((n, i) => !Object.hasOwn(rank, n) || names.indexOf(n) !== i);
  if (bad.length)
    throw ApplicationFailure.nonRetryable(
      `switch firmware steps must name each of ${Object.keys(rank).join(', ')} at most once: ${bad.join(', ')}`,
      'INVALID_ARGUMENT',
    );
  return [...steps].sort((a, b) => rank[a.name] - rank[b.name]);
}

/** The RMS code for an activity that failed for good, by its failure type. */
const codeForType: Record<string, FirmwareResultCode> = {
  UNAVAILABLE: 'SERVER_ERROR',
  INTERNAL: 'SERVER_ERROR',
  DEADLINE_EXCEEDED: 'MONITORING_TIMEOUT',
  SFTP_STALL: 'CLIENT_FAILURE',
  UNAUTHENTICATED: 'CLIENT_FAILURE',
  PERMISSION_DENIED: 'CLIENT_FAILURE',
  HOST_KEY_MISMATCH: 'CLIENT_FAILURE',
  INVALID_ARGUMENT: 'CLIENT_FAILURE',
  NOT_FOUND: 'FILE_NOT_FOUND',
  FAILED_PRECONDITION: 'PRECONDITION_FAILED',
  NVUE_ACTION_FAILED: 'TASK_FAILED',
};

export function codeForFailure(err: unknown): FirmwareResultCode {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return (cause instanceof ApplicationFailure && cause.type && codeForType[cause.type]) || 'EXCEPTION';
}

import { ApiError } from '@fleet/client';
import { CommanderError } from 'commander';

/** What fleetctl's exit status means; scripts rely on these, so they never change. */
export const ExitCode = {
  ok: 0,
  /** The job or campaign the command waited for failed or was cancelled (or fleetctl itself failed). */
  jobFailed: 1,
  /** The command line was wrong (unknown command or option, missing argument, no context). */
  usage: 2,
  /** The hub refused the request (4xx): its code, message and fields are printed. */
  refused: 3,
  /** The hub could not be reached, or answered with a server error (5xx). */
  unreachable: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A mistake in the command line that commander cannot see (a bad value, a missing context). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The hub did not answer: connection refused, DNS, TLS, timeout. */
export class HubUnreachableError extends Error {
  override readonly name = 'HubUnreachableError';
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super(`hub unreachable at ${url}: ${reason}`);
  }
}

/** A job (or campaign) ended other than succeeded. */
export class JobFailedError extends Error {
  override readonly name = 'JobFailedError';
}

/** The exit status for an error, and the lines to print on stderr. */
export function describeFailure(err: unknown): { code: ExitCode; lines: string[] } {
  if (err instanceof CommanderError) {
    // commander has already printed the usage problem (or the help/version, which exit 0).
    return { code: err.exitCode === 0 ? ExitCode.ok : ExitCode.usage, lines: [] };
  }
  if (err instanceof UsageError) return { code: ExitCode.usage, lines: [`error: ${err.message}`] };
  if (err instanceof HubUnreachableError) return { code: ExitCode.unreachable, lines: [`error: ${err.message}`] };
  if (err instanceof JobFailedError) return { code: ExitCode.jobFailed, lines: [`error: ${err.message}`] };
  if (err instanceof ApiError) {
    const lines = [`error: ${err.code} (HTTP ${err.status}): ${err.message}`];
    for (const d of err.details) lines.push(`  ${d.field ?? '(request)'}: ${d.issue}`);
    return { code: err.status >= 500 ? ExitCode.unreachable : ExitCode.refused, lines };
  }
  // Anything else is fleetctl's own failure (a file it cannot read, a bug): not a success, not the hub's fault.
  const message = err instanceof Error ? err.message : String(err);
  return { code: ExitCode.jobFailed, lines: [`error: ${message}`] };
}

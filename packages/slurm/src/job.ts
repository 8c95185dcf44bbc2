import { posix } from 'node:path';
import type { RawJob } from './schema.js';

/** Job states after which Slurm changes nothing more (v0.0.38 `job_state`). */
export const finishedJobStates: ReadonlySet<string> = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'NODE_FAIL',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
  'OUT_OF_MEMORY',
]);

/** A job as slurmrestd reports it, with the exit status decoded and the output paths made concrete. */
export interface SlurmJob {
  id: number;
  name: string;
  /** PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ... */
  state: string;
  /** Why it is in that state: `None`, `PartitionDown`, `NonZeroExitCode`, `Resources`, ... */
  stateReason: string;
  stateDescription: string;
  /** In a state Slurm will not leave. */
  finished: boolean;
  /** The script's exit code; null while the job has not finished or when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended the script (9, 15), or null. */
  signal: number | null;
  /** slurmrestd's `exit_code` as is: a wait status, not an exit code. */
  rawExitCode: number | null;
  partition: string;
  comment: string;
  userName: string;
  nodes: string;
  cwd: string;
  /** Where the script's stdout goes, on the node that ran it (Slurm's patterns expanded as far as known). */
  stdoutPath: string;
  /** Where stderr goes: the stdout file unless the job was submitted with its own. */
  stderrPath: string;
  submitTime: Date | null;
  startTime: Date | null;
  endTime: Date | null;
}

/**
 * Splits a POSIX wait status as slurmrestd reports it in `exit_code`: a script that ran `exit 1` is 256, one
 * killed by SIGKILL is 9.
 */
export function decodeWaitStatus(status: number): { exitCode: number | null; signal: number | null } {
  const signal = status & 0x7f;
  return signal === 0 ? { exitCode: (status >> 8) & 0xff, signal: null } : { exitCode: null, signal };
}

/**
 * A batch job's output path: Slurm's default `slurm-%j.out` when none was given, relative to the job's working
 * directory, with %j (job id), %x (job name), %u (user) and %% expanded; other patterns are left as they are.
 */
export function outputPath(pattern: string, job: { id: number; name: string; userName: string; cwd: string }): string {
  const file = (pattern || 'slurm-%j.out').replace(/%(%|j|x|u)/g, (_, c: string) =>
    c === 'j' ? String(job.id) : c === 'x' ? job.name : c === 'u' ? job.userName : '%',
  );
  return posix.isAbsolute(file) ? file : posix.join(job.cwd || '/', file);
}

function time(seconds: number | null | undefined): Date | null {
  return seconds ? new Date(seconds * 1000) : null;
}

export function jobFromRaw(raw: RawJob): SlurmJob {
  const finished = finishedJobStates.has(raw.job_state);
  const rawExitCode = raw.exit_code ?? null;
  // Before the job ends slurmrestd reports exit_code 0: no verdict may read that as success.
  const decoded = finished && rawExitCode !== null ? decodeWaitStatus(rawExitCode) : { exitCode: null, signal: null };
  const base = {
    id: raw.job_id,
    name: raw.name,
    userName: raw.user_name ?? '',
    cwd: raw.current_working_directory ?? '',
  };
  const stdoutPath = outputPath(raw.standard_output ?? '', base);
  return {
    ...base,
    state: raw.job_state,
    stateReason: raw.state_reason ?? '',
    stateDescription: raw.state_description ?? '',
    finished,
    ...decoded,
    rawExitCode,
    partition: raw.partition ?? '',
    comment: raw.comment ?? '',
    nodes: raw.nodes ?? '',
    stdoutPath,
    stderrPath: raw.standard_error ? outputPath(raw.standard_error, base) : stdoutPath,
    submitTime: time(raw.submit_time),
    startTime: time(raw.start_time),
    endTime: time(raw.end_time),
  };
}

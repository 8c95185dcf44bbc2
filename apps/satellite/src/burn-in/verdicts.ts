import type { SlurmJob } from '@fleet/slurm';
import type { BurnInFailureReason, BurnInVerdict } from '@fleet/domain';
import type { PlannedJob } from './plan.js';
import { lastOutputLine, parseResultLine } from './result-line.js';

/** The job's output file as read: its text, or why it could not be read. */
export type JobOutput = { ok: true; text: string } | { ok: false; message: string };

/** Verdict messages travel through Temporal: kept short. */
const MAX_MESSAGE = 1_000;
const clip = (text: string) => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text);

type JobFacts = Pick<SlurmJob, 'id' | 'state' | 'stateReason'> | null;

function verdict(
  job: PlannedJob,
  deviceId: string,
  slurm: JobFacts,
  outcome: { reason: BurnInFailureReason; message: string } | null,
): BurnInVerdict {
  return {
    deviceId,
    test: job.test,
    verdict: outcome ? 'fail' : 'pass',
    reason: outcome?.reason ?? null,
    message: clip(outcome?.message ?? 'passed'),
    slurmJobId: slurm?.id ?? null,
    slurmState: slurm?.state ?? null,
    slurmReason: slurm?.stateReason ?? null,
  };
}

/** The same failure for every tray of the job: it says nothing about any one of them. */
export function failJob(
  job: PlannedJob,
  slurm: JobFacts,
  reason: BurnInFailureReason,
  message: string,
): BurnInVerdict[] {
  return job.trays.map((t) => verdict(job, t.deviceId, slurm, { reason, message }));
}

const endReasons: Record<string, BurnInFailureReason> = {
  TIMEOUT: 'TimedOut',
  DEADLINE: 'TimedOut',
  CANCELLED: 'Cancelled',
  NODE_FAIL: 'NodeFailed',
  BOOT_FAIL: 'NodeFailed',
};

function describeEnd(slurm: SlurmJob): string {
  const why = slurm.stateReason && slurm.stateReason !== 'None' ? ` (${slurm.stateReason})` : '';
  return `SLURM job ${slurm.id} ended ${slurm.state}${why}`;
}

/**
 * The verdicts of a finished job, failing closed. Only a job that COMPLETED with exit code 0 and printed one valid
 * result line, for this test and this SLURM job, naming exactly the job's trays, can pass a tray, and only the trays
 * the line passes. A line that fails a tray is believed whatever the exit code (the test ran and found a fault).
 */
export function judgeFinishedJob(job: PlannedJob, slurm: SlurmJob, output: JobOutput): BurnInVerdict[] {
  const fail = (reason: BurnInFailureReason, message: string) => failJob(job, slurm, reason, message);
  if (slurm.state !== 'COMPLETED' && slurm.state !== 'FAILED')
    return fail(endReasons[slurm.state] ?? 'JobFailed', describeEnd(slurm));
  if (slurm.signal !== null) return fail('Signalled', `${describeEnd(slurm)}: killed by signal ${slurm.signal}`);
  const exitOk = slurm.state === 'COMPLETED' && slurm.exitCode === 0;
  const exitText = `exit code ${slurm.exitCode ?? 'unknown'}`;
  const lastLine = output.ok ? lastOutputLine(output.text) : undefined;
  const tail = lastLine ? `; last output: ${lastLine}` : '';
  const nonZero = (problem: string) => fail('NonZeroExit', `${describeEnd(slurm)} with ${exitText}; ${problem}${tail}`);

  if (!output.ok) return exitOk ? fail('OutputUnreadable', output.message) : nonZero(output.message);
  const parsed = parseResultLine(output.text);
  if (!parsed.ok) return exitOk ? fail(parsed.reason, `${parsed.message}${tail}`) : nonZero(parsed.message);
  const line = parsed.line;
  if (line.test !== job.test) return fail('WrongTest', `the result is for test ${line.test}, this job ran ${job.test}`);
  if (line.slurmJobId !== String(slurm.id))
    return fail('WrongTest', `the result is from SLURM job ${line.slurmJobId || '(none)'}, not ${slurm.id}`);

  const expected = job.trays.map((t) => t.name);
  const named = line.results.map((r) => r.device);
  const foreign = named.filter((d) => !expected.includes(d));
  const twice = named.filter((d, i) => named.indexOf(d) !== i);
  if (foreign.length > 0 || twice.length > 0)
    return fail(
      'WrongDevice',
      `the result names ${named.join(', ')}; this job tested ${expected.join(', ')}` +
        (twice.length > 0 ? ` (${[...new Set(twice)].join(', ')} twice)` : ''),
    );

  return job.trays.map((tray) => {
    const r = line.results.find((x) => x.device === tray.name);
    if (!r) return verdict(job, tray.deviceId, slurm, { reason: 'WrongDevice', message: `no result for ${tray.name}` });
    if (r.verdict === 'fail' || r.failures.length > 0) {
      const found = r.failures.length > 0 ? r.failures.join('; ') : 'the test failed without saying why';
      return verdict(job, tray.deviceId, slurm, {
        reason: 'TestFailed',
        message: exitOk ? found : `${found} (${exitText})`,
      });
    }
    if (!exitOk)
      return verdict(job, tray.deviceId, slurm, {
        reason: 'NonZeroExit',
        message: `${describeEnd(slurm)} with ${exitText} although it reported a pass${tail}`,
      });
    return verdict(job, tray.deviceId, slurm, null);
  });
}

import { heldText, isApproval, type Approval, type Job } from '@fleet/client';
import type { Command } from 'commander';
import { idempotencyHeaders } from '../api/idempotency.js';
import { JobFailedError } from '../exit-codes.js';
import { followJob } from '../jobs/follow.js';
import { progressLines } from '../jobs/progress.js';
import type { OutputFormat } from '../output/format.js';
import { printObject } from '../output/printer.js';
import { resources } from '../resources.js';
import type { Runtime } from '../runtime.js';
import { outputOption } from './options.js';

export interface MutationOptions {
  output: OutputFormat;
  idempotencyKey?: string;
  wait?: boolean;
}

/** The options every command that starts a job takes. */
export function mutationOptions(cmd: Command): Command {
  return outputOption(cmd)
    .option('--idempotency-key <key>', 'retry-safe key: the same key never starts a second job (default: a new one)')
    .option('--wait', waitHelp);
}

export const waitHelp = 'follow the job until it ends and exit with its outcome (0 succeeded, 1 failed)';

export const headersOf = (opts: MutationOptions) => ({ headers: idempotencyHeaders(opts.idempotencyKey) });

const jobColumns = resources.find((r) => r.names[0] === 'jobs')!.columns as never;

/**
 * Prints the job a command started, or with --wait follows it to the end. A request a two-person rule held
 * (docs/security.md) has no job yet: its approval is printed, and what the second person does.
 */
export async function reportJob(rt: Runtime, job: Job | Approval, opts: MutationOptions): Promise<void> {
  if (isApproval(job)) {
    await printObject(job, opts.output, rt.out, (a) => `approval ${a.id}  ${a.rule}  ${a.target}  ${a.state}\n`);
    return rt.note(heldText(job));
  }
  if (opts.wait) return void (await waitForJob(rt, job.id, opts.output));
  await printObject(job, opts.output, rt.out, jobColumns);
  if (opts.output === 'table' || opts.output === 'wide') rt.note(`follow it with: fleetctl job wait ${job.id}`);
}

/**
 * Follows a job live (progress on stderr), prints its final version on stdout, and throws JobFailedError (exit 1)
 * unless it succeeded. `shown` is a version the caller has already reported: progress starts from what differs.
 */
export async function waitForJob(
  rt: Runtime,
  id: string,
  output: OutputFormat,
  stopWhen?: (job: Job) => boolean,
  shown?: Job,
): Promise<Job> {
  let previous = shown;
  const job = await followJob(
    rt.hub(),
    id,
    (next) => {
      const time = new Date().toISOString().slice(11, 19);
      for (const line of progressLines(previous, next)) rt.note(`${time} ${line}`);
      previous = next;
    },
    stopWhen,
  );
  await printObject(job, output, rt.out, jobColumns);
  if (stopWhen?.(job)) return job;
  if (job.state !== 'succeeded') {
    const why = job.error ? `: ${job.error.code}: ${job.error.message}` : '';
    throw new JobFailedError(`job ${job.id} ${job.state}${why}`);
  }
  return job;
}

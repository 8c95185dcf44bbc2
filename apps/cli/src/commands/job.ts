import { unwrap, type Job, type paths } from '@fleet/client';
import { Argument, type Command } from 'commander';
import { deviceId } from '../api/lookup.js';
import { items, pages } from '../api/pages.js';
import { UsageError } from '../exit-codes.js';
import { followJob, getJob } from '../jobs/follow.js';
import { decisionLines, pendingDecision } from '../jobs/decision.js';
import { progressLines } from '../jobs/progress.js';
import type { OutputFormat } from '../output/format.js';
import { printObject } from '../output/printer.js';
import { jobTarget } from '../resources.js';
import type { Runtime } from '../runtime.js';
import { headersOf, mutationOptions, reportJob, waitForJob, waitHelp, type MutationOptions } from './job-result.js';
import { collect, examples, outputOption } from './options.js';

type DecisionBody = paths['/v1/jobs/{id}/decision']['post']['requestBody']['content']['application/json'];
const decisionActions: DecisionBody['action'][] = ['retry', 'skip', 'reject'];

interface DecideOptions {
  output: OutputFormat;
  reason: string;
  device?: string[];
  wait?: boolean;
}

export function registerJob(program: Command, rt: Runtime): void {
  const job = program.command('job').description('follow, cancel, decide and read jobs');
  examples(
    job,
    'fleetctl job wait 0b6f…',
    'fleetctl job logs 0b6f… --follow',
    'fleetctl job decide 0b6f… retry --reason "reseated the tray"',
  );

  const wait = job
    .command('wait <id>')
    .description(
      'follow a job live (state, stages, devices) and exit with its outcome: 0 succeeded, 1 failed or cancelled',
    );
  outputOption(wait);
  examples(wait, 'fleetctl job wait 0b6f… && echo done', 'fleetctl job wait 0b6f… -o json > job.json');
  wait.action(async (id: string, opts: { output: OutputFormat }) => void (await waitForJob(rt, id, opts.output)));

  const cancel = job.command('cancel <id>').description('cancel a job (a child its parent runs: cancel the parent)');
  mutationOptions(cancel);
  examples(cancel, 'fleetctl job cancel 0b6f…', 'fleetctl job cancel 0b6f… --wait');
  cancel.action(async (id: string, opts: MutationOptions) => {
    const cancelled = await unwrap(
      rt.hub().api.POST('/v1/jobs/{id}/cancel', { params: { path: { id } }, ...headersOf(opts) }),
    );
    if (!opts.wait) return reportJob(rt, cancelled, opts);
    // A cancelled job is the outcome asked for: it exits 0.
    let previous: Job | undefined;
    const done = await followJob(rt.hub(), id, (next) => {
      for (const line of progressLines(previous, next)) rt.note(line);
      previous = next;
    });
    await printObject(done, opts.output, rt.out, () => `job ${done.id} ${done.state}\n`);
  });

  const logs = job
    .command('logs <id>')
    .description("a job's story: its stages with times and messages, its devices (children) and its error")
    .option('-f, --follow', 'print new stages and device outcomes until the job ends');
  examples(logs, 'fleetctl job logs 0b6f…', 'fleetctl job logs 0b6f… --follow');
  logs.action(async (id: string, opts: { follow?: boolean }) => {
    const hub = rt.hub();
    if (opts.follow) {
      let previous: Job | undefined;
      const done = await followJob(hub, id, (next) => {
        const time = new Date().toISOString().slice(11, 19);
        for (const line of progressLines(previous, next)) void rt.out.write(`${time} ${line}\n`);
        previous = next;
      });
      return printChildren(rt, done);
    }
    const current = await getJob(hub, id);
    await rt.out.write(storyOf(current));
    await printChildren(rt, current);
  });

  registerDecide(job, rt);
}

function registerDecide(job: Command, rt: Runtime): void {
  const cmd = job
    .command('decide')
    .description('answer the failed stage an enrolment or burn-in waits at (fleetctl describe job shows it)')
    .argument('<job-id>', 'the job that waits')
    .addArgument(
      new Argument('<action>', 'retry the stage, skip it (admins only) or reject the devices (the rest go on)').choices(
        decisionActions,
      ),
    )
    .requiredOption('--reason <text>', "why: it stays in the job's timeline and the devices' history")
    .option('--device <id>', 'only this waiting device (repeatable; default: every waiting device)', collect);
  outputOption(cmd).option('--wait', waitHelp);
  examples(
    cmd,
    'fleetctl job decide 0b6f… retry --reason "reseated the NVLink cable" --wait',
    'fleetctl job decide 0b6f… reject --reason "GPU 3 fails the stress test" --device 5f0c2f1e-…',
  );
  cmd.action(async (id: string, action: DecisionBody['action'], opts: DecideOptions) => {
    const reason = opts.reason.trim();
    if (!reason) throw new UsageError("--reason is blank: say why (it stays in the devices' history)");
    const body: DecisionBody = { action, reason };
    if (opts.device) body.device_ids = opts.device.map(deviceId);
    const decided = await unwrap(rt.hub().api.POST('/v1/jobs/{id}/decision', { params: { path: { id } }, body }));
    const whom = opts.device ? `${opts.device.length} device(s)` : 'every waiting device';
    rt.note(`${action} sent for ${whom} of job ${id}: the job's workflow applies it next`);
    // The job still shows the decision it waited for: with --wait, only what changes after it is printed.
    if (opts.wait) return void (await waitForJob(rt, id, opts.output, undefined, decided));
    return reportJob(rt, decided, opts);
  });
}

/** The job's stages in order, each with when it started and how long it took. */
export function storyOf(job: Job): string {
  const lines = [
    `job ${job.id} ${job.kind} on ${jobTarget(job)} by ${job.created_by}: ${job.state}`,
    `  created ${job.created_at}${job.started_at ? `, started ${job.started_at}` : ''}` +
      `${job.finished_at ? `, finished ${job.finished_at}` : ''}`,
  ];
  for (const [i, s] of (job.timeline?.stages ?? []).entries()) {
    const when = s.startedAt ? ` at ${s.startedAt.slice(11, 19)}` : '';
    const took = s.durationS !== undefined ? ` (${s.durationS.toFixed(1)} s)` : '';
    lines.push(`  stage ${i + 1} ${s.name}: ${s.status}${when}${took}${s.message ? ` ${s.message}` : ''}`);
  }
  if (job.progress && !job.timeline?.stages.length)
    lines.push(`  ${job.progress.stage}${job.progress.message ? `: ${job.progress.message}` : ''}`);
  const decision = pendingDecision(job);
  if (decision) lines.push(...decisionLines(job, decision).map((l) => `  ${l}`));
  if (job.error) lines.push(`  error ${job.error.code}: ${job.error.message}`);
  return lines.join('\n') + '\n';
}

/** One line per child job (a device of a rack sequence, batch or campaign), page by page. */
async function printChildren(rt: Runtime, job: Job): Promise<void> {
  if (!job.children?.total) return;
  await rt.out.write(`devices (${job.children.total}):\n`);
  for await (const page of items(pages<Job>(rt.hub(), '/v1/jobs', { parent_id: [job.id] }, 200))) {
    const text = page
      .map((c) => `  ${jobTarget(c)} ${c.kind} ${c.state}${c.error ? `: ${c.error.message}` : ''}\n`)
      .join('');
    await rt.out.write(text);
  }
}

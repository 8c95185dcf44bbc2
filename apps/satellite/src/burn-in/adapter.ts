import type { Logger } from 'pino';
import { SlurmError, type SlurmClient, type SlurmJob, type SubmitSpec } from '@fleet/slurm';
import { burnInPassed, type BurnInInput, type BurnInResult, type BurnInTest, type BurnInVerdict } from '@fleet/domain';
import { localOutputPath, readJobOutput, type ReadOutputOptions } from './output.js';
import { planBurnIn, type PlannedJob } from './plan.js';
import type { ScriptSite } from './scripts.js';
import { failJob, judgeFinishedJob } from './verdicts.js';
import { JobWatch } from './job-watch.js';

export interface BurnInAdapterOptions {
  slurm: SlurmClient;
  partition: string;
  /** Jobs' working directory and output folder, as the SLURM nodes see it. */
  outputDir: string;
  /** The same folder on this machine, when mounted elsewhere. */
  localOutputDir?: string;
  site: ScriptSite;
  timeLimitsMin: Record<BurnInTest, number>;
  /** PENDING longer than this after submission: NeverStarted (the job is cancelled). */
  startDeadlineS: number;
  /** Running this long past the time limit: TimedOut (the job is cancelled). */
  overrunGraceS: number;
  pollIntervalMs: number;
  log: Logger;
  output?: ReadOutputOptions;
}

/**
 * What a run has done so far, small and plain (it is the activity's heartbeat): the SLURM job id per job name, and
 * the verdicts of the jobs already judged. A retry given it follows these jobs instead of submitting them.
 */
export interface BurnInProgress {
  jobs: Record<string, number>;
  settled: Record<string, BurnInVerdict[]>;
}

export interface RunHooks {
  signal: AbortSignal;
  /** Where an earlier attempt got to. */
  progress?: BurnInProgress;
  /** Called after every submit and every poll; must be cheap (the activity heartbeats it). */
  onProgress(progress: BurnInProgress): void;
  /** Waits between polls; rejects when the run is cancelled. */
  sleep(ms: number): Promise<void>;
}

/** Slurm refused the job itself: this test cannot run, which is its verdict, not a reason to try again. */
const refused = (err: unknown): err is SlurmError =>
  err instanceof SlurmError && (err.kind === 'InvalidPartition' || err.kind === 'InvalidArgument');

/**
 * Runs a burn-in's tests as SLURM jobs over slurmrestd: submits each once under its deterministic name, follows them
 * all, reads each finished job's output and turns it into verdicts (verdicts.ts), failing closed.
 */
export class BurnInAdapter {
  private readonly watch: JobWatch;

  constructor(private readonly opts: BurnInAdapterOptions) {
    this.watch = new JobWatch(opts.slurm);
  }

  async run(input: BurnInInput, hooks: RunHooks): Promise<BurnInResult> {
    const plan = planBurnIn(input);
    const progress: BurnInProgress = {
      jobs: { ...hooks.progress?.jobs },
      settled: { ...hooks.progress?.settled },
    };
    const log = this.opts.log.child({ jobId: input.jobId, burnInAttempt: input.attempt });

    // Submit what SLURM does not hold yet. One listing, made after this run began, finds the jobs an earlier attempt
    // submitted under the same names (its answer lost, or its heartbeat): they are followed, not submitted again.
    const unsubmitted = plan.filter((j) => !progress.settled[j.name] && progress.jobs[j.name] === undefined);
    // A listing that started before this run, or before a submit returned, may not hold its jobs: the follow loop's
    // start after both (a job missing from such a listing is lost).
    const began = Date.now();
    let submittedAt = began;
    if (unsubmitted.length) {
      const held = newestByName(await this.watch.list(Date.now(), hooks.signal));
      for (const job of unsubmitted) {
        const found = held.get(job.name);
        try {
          const slurmJobId =
            found?.id ?? (await this.opts.slurm.submit(this.spec(input, job), { signal: hooks.signal }));
          progress.jobs[job.name] = slurmJobId;
          submittedAt = Date.now();
          log.info({ slurmJob: job.name, slurmJobId, submitted: !found }, found ? 'found submitted' : 'submitted');
        } catch (err) {
          if (!refused(err)) throw err;
          log.warn({ slurmJob: job.name, err: err.message }, 'SLURM refused the job');
          progress.settled[job.name] = failJob(job, null, 'SubmitRefused', err.message);
        }
        hooks.onProgress(progress);
      }
    }

    const firstSeen = new Map<string, number>();
    for (let asked = Date.now(); ; asked = Date.now()) {
      const open = plan.filter((j) => !progress.settled[j.name]);
      if (open.length) {
        // Strictly after the last submit: a listing in the same millisecond may have left before its answer.
        const listing = await this.watch.list(
          Math.max(asked - this.opts.pollIntervalMs, submittedAt + 1),
          hooks.signal,
        );
        const listed = new Map(listing.map((j) => [j.id, j]));
        for (const job of open) {
          const slurmJobId = progress.jobs[job.name]!;
          const verdicts = await this.look(job, slurmJobId, listed.get(slurmJobId), firstSeen, hooks.signal);
          if (!verdicts) continue;
          progress.settled[job.name] = verdicts;
          log.info({ slurmJob: job.name, verdicts: verdicts.map((v) => `${v.verdict}/${v.reason}`) }, 'judged');
        }
      }
      hooks.onProgress(progress);
      if (plan.every((j) => progress.settled[j.name])) break;
      await hooks.sleep(this.opts.pollIntervalMs);
    }
    const verdicts = ordered(input, plan, progress.settled);
    return { passed: burnInPassed(verdicts), verdicts };
  }

  /**
   * Cancels this burn-in's unfinished SLURM jobs: the ones in `progress` and any other carrying one of its names (a
   * submit whose answer was lost). Returns the job ids cancelled. Best effort per job; an unreachable cluster throws.
   */
  async cancelJobs(input: BurnInInput, progress: BurnInProgress | undefined, signal?: AbortSignal): Promise<number[]> {
    const names = new Set(planBurnIn(input).map((j) => j.name));
    const call = signal ? { signal } : {};
    const known = new Set(Object.values(progress?.jobs ?? {}));
    const listed = await this.opts.slurm.listJobs({}, call);
    const open = listed.filter((j) => !j.finished && (names.has(j.name) || known.has(j.id)));
    const cancelled: number[] = [];
    for (const j of open) {
      try {
        await this.opts.slurm.cancel(j.id, call);
        cancelled.push(j.id);
      } catch (err) {
        this.opts.log.warn({ slurmJobId: j.id, err: (err as Error).message }, 'could not cancel a burn-in job');
      }
    }
    return cancelled;
  }

  private spec(input: BurnInInput, job: PlannedJob): SubmitSpec {
    const rendered = this.opts.site.render(job);
    const dir = this.opts.outputDir.replace(/\/+$/, '');
    return {
      name: job.name,
      script: rendered.script,
      environment: rendered.environment,
      partition: this.opts.partition,
      cwd: dir,
      stdout: `${dir}/fleet-burnin-%j.out`,
      timeLimitMinutes: this.opts.timeLimitsMin[job.test],
      comment: `fleet burn-in ${input.jobId} ${job.test}`,
    };
  }

  /**
   * The verdicts of a job that has come to an end (or overstayed its deadline), or undefined while it runs. `seen` is
   * the job as the last listing showed it; absent from a listing made after its submission, slurmctld has forgotten it.
   */
  private async look(
    job: PlannedJob,
    slurmJobId: number,
    seen: SlurmJob | undefined,
    firstSeen: Map<string, number>,
    signal: AbortSignal,
  ): Promise<BurnInVerdict[] | undefined> {
    if (!seen)
      return failJob(
        job,
        { id: slurmJobId, state: 'UNKNOWN', stateReason: '' },
        'JobLost',
        `slurmctld no longer knows SLURM job ${slurmJobId}: its end and output cannot be judged`,
      );
    if (seen.finished) {
      const path = localOutputPath(seen.stdoutPath, this.opts.outputDir, this.opts.localOutputDir);
      return judgeFinishedJob(job, seen, await readJobOutput(path, this.opts.output));
    }
    const now = Date.now();
    if (!firstSeen.has(job.name)) firstSeen.set(job.name, now);
    const since = (t: Date | null) => Math.round((now - (t?.getTime() ?? firstSeen.get(job.name)!)) / 1000);
    if (seen.state === 'PENDING') {
      // SLURM keeps whole seconds: the submission may have been up to a second later than it says.
      const waited = since(seen.submitTime && new Date(seen.submitTime.getTime() + 999));
      if (waited < this.opts.startDeadlineS) return undefined;
      await this.cancelQuietly(slurmJobId, signal);
      return failJob(
        job,
        seen,
        'NeverStarted',
        `SLURM job ${slurmJobId} still PENDING (${seen.stateReason || 'no reason given'}) ${waited} s after its ` +
          `submission (start deadline ${this.opts.startDeadlineS} s); cancelled`,
      );
    }
    const limitS = this.opts.timeLimitsMin[job.test] * 60;
    const ran = since(seen.startTime ?? seen.submitTime);
    if (ran < limitS + this.opts.overrunGraceS) return undefined;
    await this.cancelQuietly(slurmJobId, signal);
    return failJob(
      job,
      seen,
      'TimedOut',
      `SLURM job ${slurmJobId} still ${seen.state} ${ran} s after it started (limit ${limitS} s); cancelled`,
    );
  }

  private async cancelQuietly(id: number, signal: AbortSignal): Promise<void> {
    try {
      await this.opts.slurm.cancel(id, { signal });
    } catch (err) {
      if (signal.aborted) throw err;
      this.opts.log.warn({ slurmJobId: id, err: (err as Error).message }, 'could not cancel a burn-in job');
    }
  }
}

/** The newest job of each name (a name is a burn-in's job key). */
function newestByName(jobs: SlurmJob[]): Map<string, SlurmJob> {
  const out = new Map<string, SlurmJob>();
  for (const j of jobs) if ((out.get(j.name)?.id ?? -1) < j.id) out.set(j.name, j);
  return out;
}

/** One verdict per tray and test, trays in input order, then tests in input order. */
function ordered(input: BurnInInput, plan: PlannedJob[], settled: Record<string, BurnInVerdict[]>): BurnInVerdict[] {
  const all = plan.flatMap((j) => settled[j.name] ?? []);
  return input.trays.flatMap((tray) =>
    input.tests.map((test) => {
      const v = all.find((x) => x.deviceId === tray.deviceId && x.test === test);
      if (!v) throw new Error(`internal: no verdict for ${tray.deviceId} ${test}`);
      return v;
    }),
  );
}

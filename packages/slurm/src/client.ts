import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { SlurmError } from './errors.js';
import { jobFromRaw, type SlurmJob } from './job.js';
import { API_PATH, defaults, type SlurmClientOptions } from './options.js';
import { jobsResponseSchema, pingResponseSchema, submitResponseSchema, envelopeSchema } from './schema.js';
import { exchange, type HttpMethod } from './transport.js';

/** A batch job to submit. */
export interface SubmitSpec {
  /** The batch script; Slurm requires it to start with `#!`. */
  script: string;
  /** The job name; submitOnce uses it as the idempotency key. */
  name: string;
  /** Default: the cluster's default partition. */
  partition?: string;
  /** Absolute working directory on the node that runs the job. */
  cwd: string;
  /** The job's whole environment (nothing is inherited through slurmrestd). Default: a PATH only. */
  environment?: Record<string, string>;
  /** Where stdout goes: absolute or relative to cwd, `%j` for the job id. Default `slurm-%j.out` in cwd. */
  stdout?: string;
  /** Where stderr goes; default: into the stdout file. */
  stderr?: string;
  /** Slurm ends the job (state TIMEOUT) after this many minutes. Default: the partition's MaxTime. */
  timeLimitMinutes?: number;
  comment?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface FollowOptions extends CallOptions {
  /** Give up after this long and return the job as last seen (`finished` false). */
  timeoutMs: number;
  /** Between polls. Default 1 s. */
  intervalMs?: number;
  /** Called when the state or reason changes (and once for the first answer). */
  onChange?: (job: SlurmJob) => void;
}

export interface SubmitOnceResult {
  jobId: number;
  /** False when a job of that name already existed and was returned instead. */
  submitted: boolean;
  /** The existing job, when one was found. */
  existing?: SlurmJob;
}

/**
 * slurmrestd's openapi/v0.0.38 over undici, authenticated per request with X-SLURM-USER-NAME and
 * X-SLURM-USER-TOKEN (JWT). Requests are not retried: a submit that timed out may have created the job, which
 * is what submitOnce is for.
 */
export class SlurmClient {
  readonly url: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly timeoutMs: number;

  constructor(private readonly opts: SlurmClientOptions) {
    this.url = opts.url.replace(/\/+$/, '');
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher = opts.dispatcher ?? new Agent({ connections: 4 });
    this.timeoutMs = opts.requestTimeoutMs ?? defaults.requestTimeoutMs;
  }

  /** The controllers' ping answers; a SlurmError (Unavailable) when none is UP. */
  async ping(call: CallOptions = {}): Promise<{ hostname: string; ping: string; mode: string }[]> {
    const res = await this.call('GET', '/ping', pingResponseSchema, undefined, call);
    const pings = res.pings.map((p) => ({ hostname: p.hostname, ping: p.ping, mode: p.mode ?? '' }));
    if (!pings.some((p) => p.ping === 'UP'))
      throw new SlurmError('Unavailable', 'GET', this.href('/ping'), `no controller UP: ${JSON.stringify(pings)}`);
    return pings;
  }

  /** Submits a batch job and returns its id. Sent once: see submitOnce for a submit that may be repeated. */
  async submit(spec: SubmitSpec, call: CallOptions = {}): Promise<number> {
    if (!spec.script.startsWith('#!'))
      throw new SlurmError('InvalidArgument', 'POST', this.href('/job/submit'), 'the script must start with #!');
    const job = {
      name: spec.name,
      current_working_directory: spec.cwd,
      environment: spec.environment ?? defaults.environment,
      ...(spec.partition !== undefined ? { partition: spec.partition } : {}),
      ...(spec.stdout !== undefined ? { standard_output: spec.stdout } : {}),
      ...(spec.stderr !== undefined ? { standard_error: spec.stderr } : {}),
      ...(spec.timeLimitMinutes !== undefined ? { time_limit: spec.timeLimitMinutes } : {}),
      ...(spec.comment !== undefined ? { comment: spec.comment } : {}),
    };
    const res = await this.call('POST', '/job/submit', submitResponseSchema, { script: spec.script, job }, call);
    return res.job_id;
  }

  /** The job; a SlurmError NotFound when slurmctld does not know it (never submitted, or purged). */
  async getJob(id: number, call: CallOptions = {}): Promise<SlurmJob> {
    const path = `/job/${id}`;
    const res = await this.call('GET', path, jobsResponseSchema, undefined, call);
    const raw = res.jobs.find((j) => j.job_id === id);
    if (!raw) throw new SlurmError('NotFound', 'GET', this.href(path), `job ${id} is not in the answer`);
    return jobFromRaw(raw);
  }

  /**
   * The jobs slurmctld still holds (running, pending, and finished ones younger than MinJobAge), oldest first;
   * with `name`, only those of that exact name (v0.0.38 cannot filter by name itself).
   */
  async listJobs(filter: { name?: string } = {}, call: CallOptions = {}): Promise<SlurmJob[]> {
    const res = await this.call('GET', '/jobs', jobsResponseSchema, undefined, call);
    return res.jobs
      .filter((j) => filter.name === undefined || j.name === filter.name)
      .map(jobFromRaw)
      .sort((a, b) => a.id - b.id);
  }

  /** Cancels the job (CANCELLED); cancelling a finished job is accepted and changes nothing. */
  async cancel(id: number, call: CallOptions = {}): Promise<void> {
    await this.call('DELETE', `/job/${id}`, envelopeSchema, undefined, call);
  }

  /**
   * Submits unless a job named `spec.name` already exists, in any state; then returns that one (the newest if
   * several). The name carries the idempotency key, so a caller retrying after a lost answer does not start the
   * test twice. Not atomic: two callers must not race on one name (a workflow runs one activity per key).
   */
  async submitOnce(spec: SubmitSpec, call: CallOptions = {}): Promise<SubmitOnceResult> {
    const existing = (await this.listJobs({ name: spec.name }, call)).at(-1);
    if (existing) return { jobId: existing.id, submitted: false, existing };
    return { jobId: await this.submit(spec, call), submitted: true };
  }

  /**
   * Polls the job until it finishes or `timeoutMs` passes, and returns it as last seen. A job that never starts
   * (partition down, no resources) comes back unfinished with its `stateReason`; the caller decides.
   */
  async followJob(id: number, opts: FollowOptions): Promise<SlurmJob> {
    const until = Date.now() + opts.timeoutMs;
    const interval = opts.intervalMs ?? defaults.followIntervalMs;
    let last: SlurmJob | undefined;
    for (;;) {
      const job = await this.getJob(id, opts);
      if (!last || last.state !== job.state || last.stateReason !== job.stateReason) opts.onChange?.(job);
      last = job;
      const left = until - Date.now();
      if (job.finished || left <= 0) return job;
      await sleep(Math.min(interval, left), undefined, { signal: opts.signal });
    }
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private href(path: string): string {
    return `${this.url}${API_PATH}${path}`;
  }

  private async call<S extends z.ZodType>(
    method: HttpMethod,
    path: string,
    schema: S,
    json: unknown,
    call: CallOptions,
  ): Promise<z.infer<S>> {
    const token = typeof this.opts.token === 'function' ? await this.opts.token() : this.opts.token;
    return exchange(
      this.dispatcher,
      {
        method,
        url: new URL(this.href(path)),
        headers: { 'x-slurm-user-name': this.opts.user, 'x-slurm-user-token': token },
        json,
        timeoutMs: this.timeoutMs,
        ...(call.signal ? { signal: call.signal } : {}),
      },
      schema,
    );
  }
}

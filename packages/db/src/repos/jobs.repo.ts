import { and, desc, eq, inArray, isNull, lt, not, or, sql } from 'drizzle-orm';
import type {
  CampaignSignal,
  decisionSignalName,
  EnrolmentDecision,
  JobError,
  JobProgress,
  JobState,
  StageTimeline,
} from '@fleet/domain';
import { intentChannel, type DbOrTx } from '../client.js';
import { translatingViolations } from '../errors.js';
import { closeOpenChildren } from './parent-jobs.repo.js';
import { intents, jobs, type Intent, type Job, type NewJob } from '../schema/index.js';

const openStates = ['queued', 'running', 'cancelling'] as const;

/**
 * Inserts a job and its start intent; the caller supplies the transaction. A UniqueViolation names the guard that
 * refused it: jobs_one_active_per_device, or jobs_created_by_idempotency_key_unique when its key is taken.
 */
export async function insertJobWithStartIntent(tx: DbOrTx, job: NewJob): Promise<Job> {
  const [row] = await translatingViolations(tx.insert(jobs).values(job).returning());
  await tx.insert(intents).values({ jobId: row!.id, kind: 'start' });
  return row!;
}

/**
 * A start or cancel intent, or a signal to a running workflow (campaign pause, resume, approve; an enrolment's
 * decision, with its arguments).
 */
export async function insertIntent(
  tx: DbOrTx,
  jobId: string,
  ...intent:
    | ['start' | 'cancel']
    | ['signal', { signal: CampaignSignal }]
    | ['signal', { signal: typeof decisionSignalName; args: [EnrolmentDecision] }]
): Promise<void> {
  const [kind, payload] = intent;
  await tx.insert(intents).values({ jobId, kind, payload });
}

export async function getJob(db: DbOrTx, id: string): Promise<Job | undefined> {
  return db.query.jobs.findFirst({ where: eq(jobs.id, id) });
}

export async function findJobByIdempotencyKey(db: DbOrTx, createdBy: string, key: string): Promise<Job | undefined> {
  return db.query.jobs.findFirst({ where: and(eq(jobs.createdBy, createdBy), eq(jobs.idempotencyKey, key)) });
}

export async function findActiveJobForDevice(db: DbOrTx, deviceId: string): Promise<Job | undefined> {
  return db.query.jobs.findFirst({ where: and(eq(jobs.deviceId, deviceId), inArray(jobs.state, [...openStates])) });
}

export interface JobPageQuery {
  limit: number;
  after?: { createdAt: Date; id: string };
  state?: string[];
  kind?: string[];
  deviceId?: string[];
  siteId?: string[];
  rackId?: string[];
  parentId?: string[];
  /** Parents and single jobs only: a rack operation's children share its created_at and would crowd it out. */
  topLevel?: boolean;
}

/** Newest first, keyset on (created_at, id): rows created in one transaction share created_at, the id orders them. */
export async function listJobs(db: DbOrTx, q: JobPageQuery): Promise<Job[]> {
  const c = [];
  if (q.topLevel) c.push(isNull(jobs.parentId));
  if (q.state?.length) c.push(inArray(jobs.state, q.state));
  if (q.kind?.length) c.push(inArray(jobs.kind, q.kind));
  if (q.deviceId?.length) c.push(inArray(jobs.deviceId, q.deviceId));
  if (q.siteId?.length) c.push(inArray(jobs.siteId, q.siteId));
  if (q.rackId?.length) c.push(inArray(jobs.rackId, q.rackId));
  if (q.parentId?.length) c.push(inArray(jobs.parentId, q.parentId));
  if (q.after) {
    c.push(
      or(lt(jobs.createdAt, q.after.createdAt), and(eq(jobs.createdAt, q.after.createdAt), lt(jobs.id, q.after.id))),
    );
  }
  return db
    .select()
    .from(jobs)
    .where(c.length ? and(...c) : undefined)
    .orderBy(desc(jobs.createdAt), desc(jobs.id))
    .limit(q.limit);
}

/**
 * Leases up to `limit` due intents to one dispatcher. The lease (next_attempt_at moved
 * forward) keeps a second agent off them; workflow ID = job ID makes a duplicate start
 * harmless anyway.
 */
export async function leaseDueIntents(db: DbOrTx, limit: number, leaseS: number): Promise<(Intent & { job: Job })[]> {
  const rows = await db.execute<{ id: number }>(sql`
    update intents set next_attempt_at = now() + make_interval(secs => ${leaseS}), attempts = attempts + 1
    where id in (
      select id from intents where status = 'pending' and next_attempt_at <= now()
      order by next_attempt_at, id limit ${limit} for update skip locked)
    returning id`);
  const ids = rows.rows.map((r) => Number(r.id));
  if (ids.length === 0) return [];
  const leased = await db
    .select()
    .from(intents)
    .innerJoin(jobs, eq(intents.jobId, jobs.id))
    .where(inArray(intents.id, ids));
  return leased.map((r) => ({ ...r.intents, job: r.jobs })).sort((a, b) => a.id - b.id);
}

/** Marks a leased intent dispatched; false if it is no longer pending (a cancel claimed the start meanwhile). */
export async function markIntentDispatched(db: DbOrTx, id: number): Promise<boolean> {
  const marked = await db
    .update(intents)
    .set({ status: 'dispatched', dispatchedAt: new Date(), lastError: null })
    .where(and(eq(intents.id, id), eq(intents.status, 'pending')))
    .returning({ id: intents.id });
  return marked.length > 0;
}

export async function markIntentRetry(db: DbOrTx, id: number, error: string, retryInS: number): Promise<void> {
  await db
    .update(intents)
    .set({ lastError: error, nextAttemptAt: sql`now() + make_interval(secs => ${retryInS})` })
    .where(eq(intents.id, id));
}

export async function markIntentFailed(db: DbOrTx, id: number, error: string): Promise<void> {
  await db.update(intents).set({ status: 'failed', lastError: error }).where(eq(intents.id, id));
}

/** A campaign's device: its workflow is started by the campaign's, not by an intent of its own. */
const campaignDevice = () => sql`(${jobs.kind} = 'device.firmware_update' and ${jobs.parentId} is not null)`;

/** Open jobs whose workflow was started: by their own start intent, or, for a campaign's devices, the campaign's. */
const openAndDispatched = () =>
  and(
    inArray(jobs.state, [...openStates]),
    sql`exists (select 1 from intents i
      where i.job_id = case when ${campaignDevice()} then ${jobs.parentId} else ${jobs.id} end
      and i.kind = 'start' and i.status = 'dispatched')`,
  );

/** A campaign's device not yet seen running: its workflow starts when the campaign reaches it, maybe hours later. */
const waitingForCampaign = () => sql`(${jobs.state} = 'queued' and ${campaignDevice()})`;

/**
 * Open jobs whose workflow has been started, a page at a time by id; without `waiting`, not the campaign devices still
 * queued (a campaign of 10,000 devices running 100 at a time would otherwise make each page mostly of them).
 */
export async function listOpenDispatchedJobs(
  db: DbOrTx,
  limit: number,
  afterId?: string,
  opts: { waiting: boolean } = { waiting: true },
): Promise<Job[]> {
  return db
    .select()
    .from(jobs)
    .where(
      and(
        openAndDispatched(),
        opts.waiting ? undefined : not(waitingForCampaign()),
        afterId ? sql`${jobs.id} > ${afterId}` : undefined,
      ),
    )
    .orderBy(jobs.id)
    .limit(limit);
}

/** The jobs among `ids` that are open and dispatched (ids that are not jobs, such as child workflows, drop out). */
export async function openDispatchedJobsAmong(db: DbOrTx, ids: string[]): Promise<Job[]> {
  const uuids = ids.filter((id) => uuidPattern.test(id));
  if (uuids.length === 0) return [];
  return db
    .select()
    .from(jobs)
    .where(and(sql`${jobs.id} = any(${sql.param(uuids)}::uuid[])`, openAndDispatched()));
}

/**
 * Of `ids`, the jobs not yet ended, locked until the transaction ends. The projection writes a job's end, and what
 * follows from it (lifecycle moves, RMA cases, versions), from whichever listing reaches Postgres first: a later
 * listing of the same job finds it ended here and writes nothing.
 */
export async function lockOpenJobs(tx: DbOrTx, ids: string[]): Promise<Set<string>> {
  const uuids = ids.filter((id) => uuidPattern.test(id));
  if (uuids.length === 0) return new Set();
  const rows = await tx
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(sql`${jobs.id} = any(${sql.param(uuids)}::uuid[])`, inArray(jobs.state, [...openStates])))
    .for('update');
  return new Set(rows.map((r) => r.id));
}

export async function hasOpenDispatchedJobs(db: DbOrTx): Promise<boolean> {
  const rows = await db
    .select({ one: sql<number>`1` })
    .from(jobs)
    .where(openAndDispatched())
    .limit(1);
  return rows.length > 0;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface JobProjection {
  id: string;
  state: JobState;
  runId?: string | undefined;
  startedAt?: Date | undefined;
  finishedAt?: Date | undefined;
  progress?: JobProgress | undefined;
  timeline?: StageTimeline | undefined;
  result?: Record<string, unknown> | undefined;
  error?: JobError | undefined;
}

/**
 * Applies a page of projected workflow states in one statement. A terminal job is
 * never rewritten, and a job being cancelled stays `cancelling` until it ends.
 */
export async function applyJobProjections(db: DbOrTx, p: JobProjection[]): Promise<number> {
  if (p.length === 0) return 0;
  // One JSON parameter for the whole page: drizzle would spread a JS array into a list.
  const rows = p.map((x) => ({
    id: x.id,
    state: x.state,
    run_id: x.runId ?? null,
    started_at: x.startedAt?.toISOString() ?? null,
    finished_at: x.finishedAt?.toISOString() ?? null,
    progress: x.progress ?? null,
    timeline: x.timeline ?? null,
    result: x.result ?? null,
    error: x.error ?? null,
  }));
  const res = await db.execute(sql`
    update jobs j set
      state = case when j.state = 'cancelling' and p.state = 'running' then 'cancelling' else p.state end,
      run_id = coalesce(p.run_id, j.run_id),
      started_at = coalesce(j.started_at, p.started_at),
      finished_at = coalesce(p.finished_at, j.finished_at),
      progress = coalesce(p.progress, j.progress),
      timeline = coalesce(p.timeline, j.timeline),
      result = coalesce(p.result, j.result),
      error = coalesce(p.error, j.error),
      updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      as p(id uuid, state text, run_id text, started_at timestamptz, finished_at timestamptz, progress jsonb,
        timeline jsonb, result jsonb, error jsonb)
    where j.id = p.id and j.state not in ('succeeded', 'failed', 'cancelled')
      and (j.state <> p.state or p.progress is distinct from j.progress or p.timeline is distinct from j.timeline
        or j.run_id is distinct from p.run_id)`);
  return res.rowCount ?? 0;
}

export async function setJobState(db: DbOrTx, id: string, state: JobState, error?: JobError): Promise<void> {
  await db
    .update(jobs)
    .set({ state, updatedAt: new Date(), ...(error ? { error, finishedAt: new Date() } : {}) })
    .where(and(eq(jobs.id, id), inArray(jobs.state, [...openStates])));
}

export type { Job };

/** The job's start intent while it is pending (leased or waiting for a retry). */
const pendingStartOf = (jobId: string) =>
  and(eq(intents.jobId, jobId), eq(intents.kind, 'start'), eq(intents.status, 'pending'));

/**
 * Cancels a job whose start intent has not reached Temporal; true if it did. Its device jobs (a campaign's, a rack
 * sequence's: its workflow would have driven them) close with it as not reached, freeing their devices. `untried`:
 * only a start never leased, which cannot have reached Temporal; one tried before may have started the workflow (a lost
 * reply), so only that start's own retry claims it, once Temporal has no such workflow. Once the start is dispatched,
 * cancellation goes through the workflow instead.
 */
export async function cancelIfNotStarted(db: DbOrTx, jobId: string, o: { untried?: boolean } = {}): Promise<boolean> {
  return db.transaction(async (tx) => {
    const claimed = await tx
      .update(intents)
      .set({ status: 'failed', lastError: 'cancelled before the workflow started' })
      .where(and(pendingStartOf(jobId), o.untried ? eq(intents.attempts, 0) : undefined))
      .returning({ id: intents.id });
    if (claimed.length === 0) return false;
    await setJobState(tx, jobId, 'cancelled', { code: 'CANCELLED', message: 'cancelled before the workflow started' });
    await closeOpenChildren(tx, [jobId], 'not reached: the job was cancelled before it started');
    return true;
  });
}

/** Whether the job's start intent is still pending (leased or waiting for a retry). */
export async function hasPendingStart(db: DbOrTx, jobId: string): Promise<boolean> {
  const rows = await db.select({ id: intents.id }).from(intents).where(pendingStartOf(jobId)).limit(1);
  return rows.length > 0;
}

/**
 * Fails a start intent that can never be carried out (the job's plan or package is gone, its targets cannot be
 * operated) and its job, in one transaction, with the job's device jobs closed as not reached: the workflow that would
 * have driven them never runs.
 */
export async function failJobBeforeStart(
  db: DbOrTx,
  intent: { id: number; jobId: string },
  error: JobError,
): Promise<void> {
  await db.transaction(async (tx) => {
    await markIntentFailed(tx, intent.id, error.message);
    await setJobState(tx, intent.jobId, 'failed', error);
    await closeOpenChildren(tx, [intent.jobId], `not reached: the job failed before it started (${error.message})`);
  });
}

/** Wakes the workflow agent (LISTEN fleet_intents); delivered when the transaction commits. */
export async function notifyIntent(tx: DbOrTx, jobId: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${intentChannel}, ${jobId})`);
}

/** Marks an open job `cancelling` and records a cancel intent; undefined if it was not open. */
export async function requestJobCancel(tx: DbOrTx, jobId: string): Promise<Job | undefined> {
  const [row] = await tx
    .update(jobs)
    .set({ state: 'cancelling', updatedAt: new Date() })
    .where(and(eq(jobs.id, jobId), inArray(jobs.state, ['queued', 'running'])))
    .returning();
  if (!row) return undefined;
  if (row.kind === 'batch.power') {
    // A batch has no workflow of its own: each open child gets its cancel intent.
    const open = await tx
      .update(jobs)
      .set({ state: 'cancelling', updatedAt: new Date() })
      .where(and(eq(jobs.parentId, jobId), inArray(jobs.state, ['queued', 'running'])))
      .returning({ id: jobs.id });
    if (open.length) await tx.insert(intents).values(open.map((c) => ({ jobId: c.id, kind: 'cancel' })));
  } else {
    await insertIntent(tx, jobId, 'cancel');
  }
  await notifyIntent(tx, jobId);
  return row;
}

export async function setJobResult(db: DbOrTx, id: string, result: Record<string, unknown>): Promise<void> {
  await db.update(jobs).set({ result, updatedAt: new Date() }).where(eq(jobs.id, id));
}

import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { Logger } from 'pino';
import {
  aggregateBatchParents,
  applyChildOutcomes,
  applyLifecycleReports,
  applyJobProjections,
  closeOpenChildren,
  closeQueuedChildren,
  hasOpenDispatchedJobs,
  listOpenDispatchedJobs,
  lockOpenJobs,
  openChildrenOf,
  openDispatchedJobsAmong,
  recordPowerStates,
  type Db,
  type DbOrTx,
  type Job,
  type JobProjection,
  type LifecycleJobReport,
} from '@fleet/db';
import {
  hardwareMemoKey,
  jobMemoKey,
  lifecycleMemoKey,
  PowerState,
  type HardwareRecord,
  type JobMemo,
  type JobState,
  type LifecycleMemo,
} from '@fleet/domain';
import { applyDeviceVersions, deviceVersionsOf, type DeviceVersions } from './device-versions.js';
import type { AgentMetrics } from './metrics.js';
import { ListingOrder, type Listing } from './listing-order.js';
import { applyRma, collectRma, noRmaReports } from './rma-projection.js';

export interface ProjectorDeps {
  db: Db;
  client: Client;
  log: Logger;
  metrics: AgentMetrics;
  pageSize: number;
}

export interface ReconcileStats {
  temporalCalls: number;
  workflows: number;
  openJobs: number;
  changed: number;
  /** Listed jobs not written: a newer listing had written their running view, or their end was already written. */
  skipped: number;
  /** When the workflows whose end this cycle wrote closed (epoch ms): how late visibility showed them (lookback.ts). */
  endCloses: number[];
  /** The same, of those no quick cycle had listed closed: ends only a sweep saw. */
  unseenEndCloses: number[];
}

/** After a sweep step that did not reach the last open job: the id its next step starts after. */
export interface SweepStepStats extends ReconcileStats {
  after?: string;
}

/** The job kinds whose workflows move the lifecycle and report conditions and hardware (fleet_lifecycle memo). */
const lifecycleKinds = new Set([
  'rack.enrol',
  'device.enrol',
  'device.burn_in',
  'device.quarantine',
  'device.remediate',
  'device.release',
  'device.rma_ship',
  'device.rma_return',
]);

/**
 * The last lifecycle memo revision applied per job, so a sweep applies each change once; after a restart every open
 * job's memo is applied once more, which moves nothing twice (the moves already in the job's history are skipped).
 */
const appliedLifecycleRevs = new Map<string, number>();

const stateFor: Partial<Record<WorkflowExecutionInfo['status']['name'], JobState>> = {
  RUNNING: 'running',
  CONTINUED_AS_NEW: 'running',
  PAUSED: 'running',
  COMPLETED: 'succeeded',
  FAILED: 'failed',
  TERMINATED: 'failed',
  TIMED_OUT: 'failed',
  CANCELLED: 'cancelled',
};

/**
 * What each workflow looked like when the last quick cycle listed it. A quick cycle's window (the interval plus the
 * visibility lag) lists a workflow that just started or closed several times over; one listed as it was last time
 * has nothing new to write. Each quick cycle keeps only what it listed: a workflow leaves the window for good.
 */
let lastListed = new Map<string, string>();

/**
 * The closed workflows quick cycles listed in the last ten minutes, by close time (epoch ms). A sweep that writes the
 * end of one of them did not find a close visibility showed late: the quick cycle saw it before its job was marked
 * dispatched (a workflow that ends within a second), or a listing written since had it.
 */
const quickSeenCloses = new Map<string, number>();
const quickSeenForMs = 600_000;

/**
 * The order of the listings of the quick cycles and of the sweep, which run side by side: a listing never overwrites
 * what a newer one wrote (listing-order.ts).
 */
const listings = new ListingOrder<ListedJob>(({ wf }) => (stateFor[wf.status.name] ?? 'running') !== 'running');

function emptyStats(): ReconcileStats {
  return { temporalCalls: 0, workflows: 0, openJobs: 0, changed: 0, skipped: 0, endCloses: [], unseenEndCloses: [] };
}

/**
 * One reconcile cycle. Without `since`, a full sweep: the open jobs a page at a time, each page answered by a single
 * visibility query (WorkflowId IN (...)), never one Temporal call per job. With `since`, a quick cycle: one query for
 * the workflows that started or closed since then (`StartTime >= since OR CloseTime >= since`), which is every state
 * change a job can make; only the jobs it names are read from Postgres, so its cost follows the changes, not the open
 * jobs, and the interval can be short. Running workflows' progress (memo) changes are picked up by sweeps
 * (`sweepStep`), which the agent runs in a loop of their own: with thousands of open jobs a sweep is tens of visibility
 * queries against a busy Temporal, and the quick cycles that carry the state changes do not wait for it. Workflows
 * publish progress, result and error in their memo, so the listing carries it all.
 */
export async function reconcileOnce(deps: ProjectorDeps, since?: Date): Promise<ReconcileStats> {
  const stats = emptyStats();
  if (since) {
    // Nothing open, nothing to ask Temporal: an idle agent makes no calls.
    if (await hasOpenDispatchedJobs(deps.db)) {
      deps.metrics.busyCycles.inc();
      await projectChanges(deps, stats, since);
    }
  } else {
    await sweepOpenJobs(deps, stats, undefined, Infinity);
    deps.metrics.openJobs.set(stats.openJobs);
    if (stats.openJobs > 0) deps.metrics.busyCycles.inc();
  }
  await finishCycle(deps, stats);
  return stats;
}

/**
 * A step of a sweep: up to `pages` pages of the open jobs after `after` (by id); `after` in the result is where the
 * next step starts, absent once the last open job was read. Without `waiting`, campaign devices still queued are left
 * out (listOpenDispatchedJobs): a quick cycle lists their workflow when the campaign starts it.
 */
export async function sweepStep(
  deps: ProjectorDeps,
  after: string | undefined,
  pages: number,
  waiting = true,
): Promise<SweepStepStats> {
  const stats: SweepStepStats = emptyStats();
  const next = await sweepOpenJobs(deps, stats, after, pages, waiting);
  if (next !== undefined) stats.after = next;
  await finishCycle(deps, stats);
  return stats;
}

async function finishCycle(deps: ProjectorDeps, stats: ReconcileStats): Promise<void> {
  // Batches have no workflow: their state follows their children.
  stats.changed += await listings.serially(() => aggregateBatchParents(deps.db));
  deps.metrics.reconciledWorkflows.inc(stats.workflows);
  deps.metrics.projectedJobs.inc(stats.changed);
}

/**
 * Up to `pages` pages of the open jobs after `after`, each projected from one visibility query; the id the next page
 * starts after, or undefined once the last open job was read.
 */
async function sweepOpenJobs(
  deps: ProjectorDeps,
  stats: ReconcileStats,
  after: string | undefined,
  pages: number,
  waiting = true,
): Promise<string | undefined> {
  for (let n = 0; n < pages; n++) {
    const page = await listOpenDispatchedJobs(deps.db, deps.pageSize, after, { waiting });
    if (page.length === 0) return undefined;
    stats.openJobs += page.length;
    after = page[page.length - 1]!.id;
    await projectListing(deps, stats, new Map(page.map((j) => [j.id, j])), workflowIdIn(page));
    if (page.length < deps.pageSize) return undefined;
  }
  return after;
}

/** A quick cycle: the workflows that started or closed since `since` (one call), then the open jobs among them. */
async function projectChanges(deps: ProjectorDeps, stats: ReconcileStats, since: Date): Promise<void> {
  deps.metrics.temporalCalls.inc({ op: 'list' });
  stats.temporalCalls++;
  const at = since.toISOString();
  const listed = new Map<string, string>();
  const changed: { wf: WorkflowExecutionInfo; seen: string }[] = [];
  const query = `StartTime >= '${at}' OR CloseTime >= '${at}'`;
  const forgetBefore = Date.now() - quickSeenForMs;
  for (const [id, closed] of quickSeenCloses) if (closed < forgetBefore) quickSeenCloses.delete(id);
  const listing = listings.begin();
  try {
    for await (const wf of deps.client.workflow.list({ query, pageSize: deps.pageSize })) {
      stats.workflows++;
      if (wf.closeTime) quickSeenCloses.set(wf.workflowId, +wf.closeTime);
      const seen = `${wf.runId} ${wf.status.name} ${wf.historyLength} ${JSON.stringify(wf.memo ?? {})}`;
      if (lastListed.get(wf.workflowId) === seen) listed.set(wf.workflowId, seen);
      else changed.push({ wf, seen });
    }
    for (let i = 0; i < changed.length; i += deps.pageSize) {
      const page = changed.slice(i, i + deps.pageSize);
      const jobs = await openDispatchedJobsAmong(
        deps.db,
        page.map(({ wf }) => wf.workflowId),
      );
      const open = new Map(jobs.map((j) => [j.id, j]));
      const batch = [];
      for (const { wf } of page) {
        const job = open.get(wf.workflowId);
        if (job) batch.push({ job, wf });
      }
      const held = batch.length ? await applyPage(deps, stats, listing, batch) : new Set<string>();
      for (const { wf, seen } of page) {
        // A running workflow without an open dispatched job may be one whose start is not yet marked dispatched, and
        // a view held back for a newer one may be older than what the next cycle lists: both are looked at again
        // next time. A closed one without an open job has nothing more to say.
        const job = open.get(wf.workflowId);
        if (job ? !held.has(job.id) : stateFor[wf.status.name] !== 'running') listed.set(wf.workflowId, seen);
      }
    }
  } catch (err) {
    // Whatever was not written is listed again next time, as new.
    lastListed = new Map();
    throw err;
  } finally {
    listings.end(listing);
  }
  lastListed = listed;
}

/** Lists `query` (one Temporal call) and writes what it says of the jobs in `open`, a page per transaction. */
async function projectListing(
  deps: ProjectorDeps,
  stats: ReconcileStats,
  open: Map<string, Job>,
  query: string,
): Promise<void> {
  deps.metrics.temporalCalls.inc({ op: 'list' });
  stats.temporalCalls++;
  const listing = listings.begin();
  try {
    let batch: { job: Job; wf: WorkflowExecutionInfo }[] = [];
    for await (const wf of deps.client.workflow.list({ query, pageSize: deps.pageSize })) {
      stats.workflows++;
      const job = open.get(wf.workflowId);
      // A child workflow, or a job already projected as ended.
      if (!job) continue;
      batch.push({ job, wf });
      if (batch.length >= deps.pageSize) {
        await applyPage(deps, stats, listing, batch);
        batch = [];
      }
    }
    if (batch.length) await applyPage(deps, stats, listing, batch);
  } finally {
    listings.end(listing);
  }
}

type ListedJob = { job: Job; wf: WorkflowExecutionInfo };

/**
 * A campaign's end closes its devices still queued as never reached (applyFreshPage), so before it is written they are
 * listed once by id: a device whose workflow ran while no listing had shown it (visibility lag past the quick window;
 * the light sweeps leave queued devices out) is written from its own workflow, not as never reached.
 */
async function projectDevicesOfEndedCampaigns(deps: ProjectorDeps, stats: ReconcileStats, page: ListedJob[]) {
  for (const { job, wf } of page) {
    if (job.kind !== 'firmware.campaign' || (stateFor[wf.status.name] ?? 'running') === 'running') continue;
    const open = await openChildrenOf(deps.db, job.id);
    // Their ends are old news to the lookback (lookback.ts): only the calls and writes count in the caller's stats.
    const own = emptyStats();
    for (let i = 0; i < open.length; i += deps.pageSize) {
      const ids = open.slice(i, i + deps.pageSize);
      await projectListing(deps, own, new Map(ids.map((j) => [j.id, j])), workflowIdIn(ids));
    }
    stats.temporalCalls += own.temporalCalls;
    stats.workflows += own.workflows;
    stats.changed += own.changed;
  }
}

const workflowIdIn = (jobs: Job[]) => `WorkflowId IN (${jobs.map((j) => `'${j.id}'`).join(', ')})`;

/**
 * One transaction per page: a reader never sees a finished rack job with open children, nor a finished campaign with
 * devices still queued. Written after every earlier write, and only for the jobs no newer listing has written
 * (listing-order.ts).
 */
async function applyPage(
  deps: ProjectorDeps,
  stats: ReconcileStats,
  listing: Listing,
  page: ListedJob[],
): Promise<Set<string>> {
  await projectDevicesOfEndedCampaigns(deps, stats, page);
  const { result, held } = await listings.write(listing, page, (fresh) =>
    deps.db
      .transaction(async (tx) => {
        // A job another listing has just written as ended is left alone: its end and what follows were written once.
        const open = await lockOpenJobs(
          tx,
          fresh.map(({ job }) => job.id),
        );
        const still = fresh.filter(({ job }) => open.has(job.id));
        return { ...(await applyFreshPage(deps, tx, listing.at, still)), still, ended: fresh.length - still.length };
      })
      .then((written) => {
        written.committed();
        return written;
      }),
  );
  stats.changed += result.changed;
  stats.skipped += held.length + result.ended;
  for (const { wf } of result.still) {
    if (!wf.closeTime || (stateFor[wf.status.name] ?? 'running') === 'running') continue;
    stats.endCloses.push(+wf.closeTime);
    if (!quickSeenCloses.has(wf.workflowId)) stats.unseenEndCloses.push(+wf.closeTime);
  }
  return new Set(held.map(({ job }) => job.id));
}

/** Writes a page of jobs, all still open, in the caller's transaction; `committed` once the transaction has. */
async function applyFreshPage(
  deps: ProjectorDeps,
  tx: DbOrTx,
  listedAt: Date,
  page: ListedJob[],
): Promise<{ changed: number; committed: () => void }> {
  const projections: JobProjection[] = [];
  const readings: { deviceId: string; powerState: string; at: Date }[] = [];
  const rackChildren: { parentId: string; memo: JobMemo; terminal: boolean }[] = [];
  const firmware: DeviceVersions[] = [];
  const endedCampaigns: string[] = [];
  const lifecycle: LifecycleJobReport[] = [];
  const rma = noRmaReports();
  for (const { job, wf } of page) {
    const p = project(job, wf);
    if (!p) continue;
    projections.push(p);
    const report = lifecycleReport(job, wf);
    if (report) lifecycle.push(report);
    // RMA (docs/day2.md): an exhausted remediation drafts a case; an enrolment revalidates a returned device.
    collectRma(rma, job, wf, p, report !== undefined);
    const reading = powerReading(job, p);
    if (reading) readings.push(reading);
    const fw = deviceVersionsOf(job, wf, p);
    if (fw) firmware.push(fw);
    if (job.kind === 'firmware.campaign' && p.state !== 'running') endedCampaigns.push(job.id);
    if (job.kind.startsWith('rack.')) {
      const memo = (wf.memo?.[jobMemoKey] ?? {}) as JobMemo;
      rackChildren.push({ parentId: job.id, memo, terminal: p.state !== 'running' });
      const at = rackReadingsAt(job.id, p.state === 'running', listedAt, wf.closeTime);
      for (const [deviceId, o] of Object.entries(memo.devices ?? {})) {
        if (o.powerState && PowerState.safeParse(o.powerState).success)
          readings.push({ deviceId, powerState: o.powerState, at });
      }
    }
  }
  // Lifecycle first: a job seen ended has its last moves applied in the same transaction as its end.
  const applied = await applyLifecycleReports(tx, lifecycle);
  for (const r of applied.refused)
    deps.log.warn(
      { jobId: r.jobId, workflowId: r.jobId, deviceId: r.deviceId, err: r.message },
      'lifecycle move refused',
    );
  // RMA cases after the lifecycle: they read the devices' new states and hardware.
  await applyRma(tx, rma, deps.log);
  const changed = await applyJobProjections(tx, projections);
  await recordPowerStates(tx, readings);
  // Rack workflows drive their child jobs through the memo; children left open when
  // the parent ended were never reached.
  for (const r of rackChildren) await applyChildOutcomes(tx, r.parentId, r.memo.devices ?? {});
  await closeOpenChildren(
    tx,
    rackChildren.filter((r) => r.terminal).map((r) => r.parentId),
    'not reached: the rack job ended first',
  );
  await applyDeviceVersions(tx, firmware);
  // A campaign that ended (cancelled, failed, terminated) never started the devices still queued; one seen running is
  // written from its own workflow.
  await closeQueuedChildren(tx, endedCampaigns, 'not reached: the campaign ended first');
  return {
    changed,
    committed: () => {
      for (const r of lifecycle) appliedLifecycleRevs.set(r.jobId, r.lifecycle.rev);
      for (const p of projections) if (p.state !== 'running') appliedLifecycleRevs.delete(p.id);
    },
  };
}

/** Per running rack job, the listing time its last written readings carry. */
const rackReadingsListedAt = new Map<string, number>();

/**
 * When a rack job's power readings were true. A running view's date from its listing, so one listed later wins
 * whichever is written last. An ended view's (written once: lockOpenJobs) date from the job's close, like a power
 * job's reading, but never before the readings of a running view written earlier: that listing's time is the agent's
 * clock and the close Temporal's, and a view listed just after the close, before visibility showed it, still read
 * the job running.
 */
export function rackReadingsAt(jobId: string, running: boolean, listedAt: Date, closedAt: Date | undefined): Date {
  if (running) {
    rackReadingsListedAt.set(jobId, listedAt.getTime());
    return listedAt;
  }
  const earlier = rackReadingsListedAt.get(jobId);
  rackReadingsListedAt.delete(jobId);
  const closed = closedAt?.getTime() ?? Date.now();
  return new Date(earlier === undefined ? closed : Math.max(closed, earlier + 1));
}

/** A lifecycle job's memo report, when it changed since it was last applied. */
function lifecycleReport(job: Job, wf: WorkflowExecutionInfo): LifecycleJobReport | undefined {
  if (!lifecycleKinds.has(job.kind)) return undefined;
  const lifecycle = wf.memo?.[lifecycleMemoKey] as LifecycleMemo | undefined;
  if (!lifecycle || lifecycle.rev <= (appliedLifecycleRevs.get(job.id) ?? 0)) return undefined;
  const hardware = (wf.memo?.[hardwareMemoKey] ?? {}) as Record<string, HardwareRecord>;
  return { jobId: job.id, lifecycle, hardware };
}

export function project(job: Job, wf: WorkflowExecutionInfo): JobProjection | undefined {
  const state = stateFor[wf.status.name];
  if (!state) return undefined;
  const memo = (wf.memo?.[jobMemoKey] ?? {}) as JobMemo;
  const terminal = state !== 'running';
  return {
    id: job.id,
    state,
    runId: wf.runId,
    startedAt: wf.startTime,
    finishedAt: terminal ? (wf.closeTime ?? new Date()) : undefined,
    progress: memo.progress,
    timeline: memo.timeline,
    // A failed job may still have a result (a firmware update's per-component outcomes).
    result: terminal ? memo.result : undefined,
    error:
      terminal && state !== 'succeeded'
        ? (memo.error ?? { code: wf.status.name, message: `workflow ${wf.status.name.toLowerCase()}` })
        : undefined,
  };
}

/** A finished power job tells us the device's power state as the BMC reported it. */
function powerReading(job: Job, p: JobProjection): { deviceId: string; powerState: string; at: Date } | undefined {
  if ((job.kind !== 'device.power' && job.kind !== 'device.power_refresh') || p.state !== 'succeeded' || !job.deviceId)
    return undefined;
  const parsed = PowerState.safeParse(p.result?.['powerState']);
  return parsed.success
    ? { deviceId: job.deviceId, powerState: parsed.data, at: p.finishedAt ?? new Date() }
    : undefined;
}

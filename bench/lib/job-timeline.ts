import type { Client } from '@temporalio/client';

/** One job's path, each stage in ms: where the time between intent and projected outcome goes. */
export interface JobStages {
  /** The job row's created_at to the workflow's start in Temporal (intent pickup, input build, start call). */
  dispatch: number;
  /** Workflow start to its first workflow task starting on the satellite. */
  firstTask: number;
  /** Activity scheduled to started (the satellite picking it up). */
  activityPickup: number;
  /** Activity started to completed: the device I/O, simulated time included. */
  activity: number;
  /** Activity completed to the workflow closing (the last workflow task). */
  closing: number;
  /** Workflow closed to the agent writing the terminal state (the projection). */
  projection: number;
}

/** History event types (temporal.api.enums.v1.EventType); @temporalio/proto is not a direct dependency here. */
const E = {
  EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: 1,
  EVENT_TYPE_WORKFLOW_TASK_STARTED: 6,
  EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: 10,
  EVENT_TYPE_ACTIVITY_TASK_STARTED: 11,
  EVENT_TYPE_ACTIVITY_TASK_COMPLETED: 12,
} as const;
/** Short names of the event types a device workflow writes, for per-type counts. */
const names: Record<number, string> = {
  1: 'workflow_started',
  2: 'workflow_completed',
  3: 'workflow_failed',
  5: 'task_scheduled',
  6: 'task_started',
  7: 'task_completed',
  10: 'activity_scheduled',
  11: 'activity_started',
  12: 'activity_completed',
  13: 'activity_failed',
  17: 'timer_started',
  18: 'timer_fired',
  25: 'marker',
  26: 'signaled',
  40: 'search_attributes',
  46: 'memo',
};

/** A history's events counted by type. */
export function eventsByType(events: { eventType?: number | null }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) {
    const name = names[Number(e.eventType)] ?? `type_${e.eventType}`;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

type HistoryEvent = NonNullable<
  Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']
>[number];
const ms = (t: HistoryEvent | undefined) => {
  const ts = t?.eventTime;
  return ts ? Number(ts.seconds ?? 0) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6) : NaN;
};

/** Reads each job's history (after the measurement, so it adds no load to it) and splits its latency into stages. */
export async function jobStages(
  client: Client,
  jobs: { id: string; createdAt: Date; updatedAt: Date }[],
): Promise<JobStages[]> {
  const out: JobStages[] = [];
  for (let i = 0; i < jobs.length; i += 20) {
    out.push(
      ...(await Promise.all(
        jobs.slice(i, i + 20).map(async (job) => {
          const events = (await client.workflow.getHandle(job.id).fetchHistory()).events ?? [];
          const first = (type: number) => events.find((e) => e.eventType === type);
          const last = (type: number) => events.findLast((e) => e.eventType === type);
          const started = ms(first(E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED));
          const closed = ms(events[events.length - 1]);
          const completed = ms(last(E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED));
          return {
            dispatch: started - job.createdAt.getTime(),
            firstTask: ms(first(E.EVENT_TYPE_WORKFLOW_TASK_STARTED)) - started,
            activityPickup:
              ms(first(E.EVENT_TYPE_ACTIVITY_TASK_STARTED)) - ms(first(E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)),
            activity: completed - ms(first(E.EVENT_TYPE_ACTIVITY_TASK_STARTED)),
            closing: closed - completed,
            projection: job.updatedAt.getTime() - closed,
          };
        }),
      )),
    );
  }
  return out;
}

/** The median of each stage, rounded to ms. */
export function medianStages(stages: JobStages[]): Record<keyof JobStages, number> {
  const keys = ['dispatch', 'firstTask', 'activityPickup', 'activity', 'closing', 'projection'] as const;
  return Object.fromEntries(
    keys.map((k) => [
      k,
      Math.round(
        percentile(
          stages.map((s) => s[k]),
          50,
        ),
      ),
    ]),
  ) as Record<keyof JobStages, number>;
}

/** Nearest-rank percentile of unsorted values. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** One activity of a workflow as Temporal recorded it: when it was scheduled and, if it was, completed (epoch ms). */
export interface ActivityTimes {
  activityId: string;
  scheduledAt: number;
  completedAt: number | undefined;
  /** The attempt that closed it: Temporal writes a retried activity's started event once, for its last attempt. */
  attempt: number | undefined;
}

/** Every activity a workflow scheduled, from its history. */
export async function activityTimes(client: Client, workflowId: string): Promise<ActivityTimes[]> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const byEvent = new Map<string, ActivityTimes>();
  for (const e of events) {
    if (e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      byEvent.set(String(e.eventId), {
        activityId: e.activityTaskScheduledEventAttributes?.activityId ?? '',
        scheduledAt: ms(e),
        completedAt: undefined,
        attempt: undefined,
      });
    if (e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
      const a = byEvent.get(String(e.activityTaskStartedEventAttributes?.scheduledEventId));
      if (a) a.attempt = e.activityTaskStartedEventAttributes?.attempt ?? undefined;
    }
    if (e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const a = byEvent.get(String(e.activityTaskCompletedEventAttributes?.scheduledEventId));
      if (a) a.completedAt = ms(e);
    }
  }
  return [...byEvent.values()];
}

/**
 * A device workflow's time split at its workflow tasks and activities (ms, from its history): the first task's
 * pickup, then for each activity the wait before it (the workflow task that scheduled it, local activities
 * included), its pickup and its run, then the closing task. Summed over a campaign's sampled children against
 * their device time, it shows where an update under load spends more than the device does.
 */
export function workflowSegments(events: HistoryEvent[]): Record<string, number> {
  const out: Record<string, number> = {};
  const start = ms(events[0]);
  let mark = start;
  let n = 0;
  const firstTask = events.find((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_STARTED);
  if (firstTask) {
    out['first_task_pickup'] = ms(firstTask) - start;
    mark = ms(firstTask);
  }
  for (const e of events) {
    if (e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      n++;
      out[`a${n}_before`] = ms(e) - mark;
      mark = ms(e);
    } else if (e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
      out[`a${n}_pickup`] = ms(e) - mark;
      mark = ms(e);
    } else if (e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      out[`a${n}_run`] = ms(e) - mark;
      mark = ms(e);
    }
  }
  out['closing'] = ms(events[events.length - 1]) - mark;
  out['total'] = ms(events[events.length - 1]) - start;
  return out;
}

import type { RedfishClient, RedfishResponse } from './client.js';
import { headerValue, sleep } from '@fleet/http';
import { RedfishError } from './errors.js';
import { linkOf, readCollectionWithBodies, rootLink } from './discovery.js';
import { TaskPollPacer } from './task-pacing.js';

export interface TaskMessage {
  MessageId?: string;
  Message?: string;
  Severity?: string;
  MessageSeverity?: string;
  MessageArgs?: unknown[];
}

export interface RedfishTask {
  '@odata.id'?: string;
  Id?: string;
  TaskState?: string;
  TaskStatus?: string;
  PercentComplete?: number;
  StartTime?: string;
  EndTime?: string;
  Messages?: TaskMessage[];
}

export type TaskOutcome = 'pending' | 'succeeded' | 'failed';

export interface TaskResult {
  outcome: 'succeeded' | 'failed';
  taskUri: string;
  taskState: string | undefined;
  taskStatus: string | undefined;
  percentComplete: number | undefined;
  /** Why the task counts as failed: the failing message, else the state or status. */
  failureReason?: string;
  messages: TaskMessage[];
}

// docs/reference/rms-behaviours.md#redfish-task-states: the TaskState sets RMS uses (compared case-insensitively).
const pendingStates = new Set(['new', 'pending', 'running', 'service', 'starting']);
const failedStates = new Set([
  'cancelled',
  'cancelling',
  'exception',
  'interrupted',
  'killed',
  'stopping',
  'suspended',
]);
const failedStatuses = new Set(['critical', 'error', 'failed', 'failure', 'exception']);
const failureWords = /failed|failure|error|exception|aborted|violation/;

/**
 * Where a task stands. A failed TaskState wins; a pending one means keep polling;
 * a finished task (Completed, or a state outside both sets) still counts as failed
 * when its TaskStatus or any message says so, since BMCs report a flash that
 * "completed with errors" as Completed.
 */
export function classifyTask(task: RedfishTask): TaskOutcome {
  const state = task.TaskState?.toLowerCase() ?? '';
  if (failedStates.has(state)) return 'failed';
  if (pendingStates.has(state)) return 'pending';
  return failureOf(task) ? 'failed' : 'succeeded';
}

function failureOf(task: RedfishTask): string | undefined {
  const status = task.TaskStatus?.toLowerCase();
  for (const m of task.Messages ?? []) {
    if (messageSaysFailure(m)) return m.Message ?? m.MessageId ?? 'task message reports a failure';
  }
  if (status && failedStatuses.has(status)) return `TaskStatus ${task.TaskStatus}`;
  return undefined;
}

function messageSaysFailure(m: TaskMessage): boolean {
  const severity = (m.Severity ?? m.MessageSeverity ?? '').toLowerCase();
  const lastIdSegment = (m.MessageId ?? '').split('.').pop()?.toLowerCase() ?? '';
  // "NoError" names the absence of one.
  return [severity, lastIdSegment].some((s) => failureWords.test(s.replaceAll('noerror', '')));
}

/**
 * A task as the BMC sent it, keeping only what has the schema's types: classifyTask and the callers that read
 * Messages never meet a TaskState that is a number or a Messages that is not a list.
 */
export function taskOf(body: unknown): RedfishTask {
  const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const str = (o: Record<string, unknown>, k: string) => (typeof o[k] === 'string' ? { [k]: o[k] as string } : {});
  const messages = Array.isArray(b['Messages'])
    ? (b['Messages'] as unknown[])
        .filter((m): m is Record<string, unknown> => m !== null && typeof m === 'object' && !Array.isArray(m))
        .map((m): TaskMessage => ({
          ...str(m, 'MessageId'),
          ...str(m, 'Message'),
          ...str(m, 'Severity'),
          ...str(m, 'MessageSeverity'),
          ...(Array.isArray(m['MessageArgs']) ? { MessageArgs: m['MessageArgs'] as unknown[] } : {}),
        }))
    : undefined;
  return {
    ...str(b, '@odata.id'),
    ...str(b, 'Id'),
    ...str(b, 'TaskState'),
    ...str(b, 'TaskStatus'),
    ...(typeof b['PercentComplete'] === 'number' ? { PercentComplete: b['PercentComplete'] } : {}),
    ...str(b, 'StartTime'),
    ...str(b, 'EndTime'),
    ...(messages ? { Messages: messages } : {}),
  };
}

const taskPath = /\/TaskService\/(?:Tasks|TaskMonitors)\/[^/?#]+/;

/**
 * The task a POST (firmware push, long action) started, as a URI to poll. Looked for in
 * the body's @odata.id, the Location header (202 Accepted), then Message arguments
 * (docs/reference/rms-behaviours.md#firmware-push); a `/Tasks/{id}/Monitor` URI is polled as its task.
 */
export function taskUriFrom(res: Pick<RedfishResponse, 'headers' | 'body'>): string | undefined {
  const body = taskOf(res.body);
  const candidates = [
    body['@odata.id'],
    headerValue(res.headers, 'location'),
    ...(body.Messages ?? []).flatMap((m) => m.MessageArgs ?? []),
  ];
  for (const c of candidates) {
    if (typeof c !== 'string') continue;
    let path: string;
    try {
      path = new URL(c, 'http://x').pathname;
    } catch {
      continue;
    }
    const match = taskPath.exec(path);
    if (match) return path.slice(0, match.index + match[0].length);
  }
  return undefined;
}

export interface WaitForTaskOptions {
  /** RMS polls a compute firmware update every 5 s (docs/reference/rms-behaviours.md#firmware-timings). */
  pollIntervalMs?: number;
  /** Give up (RedfishError Timeout) after this long; nvfwupd's default is 900 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (task: RedfishTask) => void;
}

/**
 * Polls a task until it leaves the pending states, at the interval, or sooner near the end its progress foretells
 * (TaskPollPacer). Unavailable/Timeout while polling are expected (the BMC restarts services during a flash) and
 * only end the wait at the deadline.
 */
export async function waitForTask(
  client: RedfishClient,
  taskUri: string,
  opts: WaitForTaskOptions = {},
): Promise<TaskResult> {
  const interval = opts.pollIntervalMs ?? 5_000;
  const deadline = Date.now() + (opts.timeoutMs ?? 900_000);
  const pacer = new TaskPollPacer(interval);
  let lastError: RedfishError | undefined;
  for (;;) {
    let delay = interval;
    try {
      const task = taskOf(await client.get<unknown>(taskUri));
      lastError = undefined;
      opts.onProgress?.(task);
      const outcome = classifyTask(task);
      if (outcome !== 'pending') return resultOf(taskUri, task, outcome);
      delay = pacer.next(Date.now(), task.PercentComplete);
    } catch (err) {
      if (!(err instanceof RedfishError) || !err.retryable) throw err;
      lastError = err;
    }
    if (Date.now() + delay > deadline) {
      throw new RedfishError(
        'Timeout',
        client.bmc,
        taskUri,
        `task still pending at the deadline${lastError ? ` (last error: ${lastError.causeText})` : ''}`,
      );
    }
    await sleep(delay, opts.signal);
  }
}

function resultOf(taskUri: string, task: RedfishTask, outcome: 'succeeded' | 'failed'): TaskResult {
  const failureReason = outcome === 'failed' ? (failureOf(task) ?? `TaskState ${task.TaskState}`) : undefined;
  return {
    outcome,
    taskUri,
    taskState: task.TaskState,
    taskStatus: task.TaskStatus,
    percentComplete: task.PercentComplete,
    ...(failureReason ? { failureReason } : {}),
    messages: task.Messages ?? [],
  };
}

/**
 * Every task the BMC still lists, read one by one (RMS's "task scan", docs/reference/rms-behaviours.md#power-shelves):
 * how a caller finds the task of an upload whose response it never saw (a worker killed mid-request).
 */
export async function listTasks(client: RedfishClient): Promise<(RedfishTask & { uri: string })[]> {
  return client.discovered(() => scanTasks(client));
}

async function scanTasks(client: RedfishClient): Promise<(RedfishTask & { uri: string })[]> {
  // The collection's link is kept like any discovered link; a TaskService naming none is read again next time.
  const collection = await client.cachedIf(
    'link:TaskService.Tasks',
    async () => linkOf(await client.get<Record<string, unknown>>(await rootLink(client, 'Tasks')), 'Tasks'),
    (link) => link !== undefined,
  );
  if (!collection) return [];
  const { members, read } = await readCollectionWithBodies(client, collection);
  const out: (RedfishTask & { uri: string })[] = [];
  for (const uri of members) {
    try {
      out.push({ ...taskOf(await read<unknown>(uri)), uri });
    } catch (err) {
      // A task overwritten between the listing and the read is simply gone.
      if (!(err instanceof RedfishError) || err.code !== 'NotFound') throw err;
    }
  }
  return out;
}

/** The task's outcome, as classifyTask judges it, with its failure reason. */
export function taskResult(taskUri: string, task: RedfishTask): TaskResult | undefined {
  const outcome = classifyTask(task);
  return outcome === 'pending' ? undefined : resultOf(taskUri, task, outcome);
}

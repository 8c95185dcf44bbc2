import type { CallOptions, NvueClient } from './client.js';
import { NvueError } from './errors.js';
import { poll, type PollOptions } from './poll.js';
import { headerValue } from '@fleet/http';
import type { NvueResponse } from './transport.js';

export interface ActionStatus {
  state: string | undefined;
  percent: number | undefined;
  status: string | undefined;
  detail: string | undefined;
  issues: string[];
  httpStatus: number | undefined;
}

export interface ActionResult {
  actionId: string;
  state: string;
  percent: number | undefined;
  detail: string | undefined;
  /** An install that ended action_error at 100%: the switch went down to boot the new image. */
  rebootHandoff: boolean;
}

/** What a waiting caller is told on every poll, e.g. to heartbeat while a switch reboots. */
export interface ActionProgress {
  actionId: string;
  status?: ActionStatus;
  /** Set instead of `status` while the switch does not answer. */
  unreachable?: NvueError;
}

export interface WaitForActionOptions extends PollOptions {
  /**
   * Image-install semantics (docs/reference/rms-behaviours.md#nvue-actions): action_error at 100% is the reboot handoff
   * and counts as success, and HTTP errors while the switch reboots only mean "not yet".
   */
  installHandoff?: boolean;
  onProgress?: (p: ActionProgress) => void;
}

// docs/reference/rms-behaviours.md#nvue-actions, plus `running`, which nvfwupd's switch target also treats as pending.
const pending = new Set(['start', 'inactive', 'action_running', 'running']);
const failedStates = new Set(['action_error', 'action_failed']);
const idKeys = ['id', 'Id', 'action-id', 'actionId', 'job_id', 'JobId', '@odata.id', 'href', 'location'];

/** The action an answer started: a string or number body, or an object naming it; a URI yields its last segment. */
export function actionIdFrom(res: Pick<NvueResponse, 'body' | 'headers'>): string | undefined {
  const lastSegment = (v: string) => v.split('?')[0]!.replace(/\/+$/, '').split('/').pop()!.trim();
  const b = res.body;
  if (typeof b === 'number') return String(b);
  if (typeof b === 'string' && b.trim()) return lastSegment(b);
  if (typeof b === 'object' && b !== null) {
    for (const key of idKeys) {
      const v = (b as Record<string, unknown>)[key];
      if (typeof v === 'number') return String(v);
      if (typeof v === 'string' && v.trim()) return lastSegment(v);
    }
  }
  const location = headerValue(res.headers, 'location');
  return location ? lastSegment(location) : undefined;
}

export function parseAction(body: unknown): ActionStatus {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const rawPercent = b['percentage'] ?? b['percent'] ?? b['PercentComplete'];
  const percent =
    typeof rawPercent === 'number'
      ? rawPercent
      : typeof rawPercent === 'string'
        ? Number.parseFloat(rawPercent)
        : undefined;
  const issue = b['issue'];
  const issues = (Array.isArray(issue) ? issue : issue && typeof issue === 'object' ? Object.values(issue) : []).map(
    (i) => (typeof i === 'string' ? i : String((i as { message?: unknown })?.message ?? JSON.stringify(i))),
  );
  const http = b['http-status'] ?? b['http_status'];
  return {
    state: str(b['state']),
    percent: percent !== undefined && Number.isFinite(percent) ? percent : undefined,
    status: str(b['status']),
    detail: str(b['detail']),
    issues,
    httpStatus: typeof http === 'number' ? http : undefined,
  };
}

/** `unknown`: a state outside NVUE's action states, which the client refuses to guess about. */
export type ActionOutcome = 'pending' | 'succeeded' | 'handoff' | 'failed' | 'unknown';

export function classifyAction(a: ActionStatus, installHandoff = false): ActionOutcome {
  if (a.httpStatus !== undefined && a.httpStatus >= 400) return 'failed';
  if (a.state === 'action_success') return 'succeeded';
  if (a.state === 'action_error' && installHandoff && a.percent === 100) return 'handoff';
  if (a.state && failedStates.has(a.state)) return 'failed';
  return a.state && pending.has(a.state) ? 'pending' : 'unknown';
}

/**
 * The id of an action the switch is still running whose status text matches, from
 * `GET /nvue_v1/action`; undefined when none runs or this NVOS does not list its actions (404).
 * It lets a caller whose POST answer was lost, or whose worker died before recording the id,
 * follow that action instead of starting a second one.
 */
export async function findPendingAction(
  c: NvueClient,
  matches: (status: string) => boolean,
  opts: CallOptions = {},
): Promise<string | undefined> {
  let actions: unknown;
  try {
    actions = await c.get('/action', opts);
  } catch (err) {
    if (err instanceof NvueError && err.kind === 'NotFound') return undefined;
    throw err;
  }
  if (!actions || typeof actions !== 'object') return undefined;
  return Object.entries(actions).find(([, body]) => {
    const a = parseAction(body);
    return classifyAction(a, true) === 'pending' && matches(a.status ?? '');
  })?.[0];
}

/** POSTs an action body and returns the id of the action it started. */
export async function startAction(c: NvueClient, path: string, body: unknown, opts: CallOptions = {}): Promise<string> {
  const res = await c.post(path, body, opts);
  const id = actionIdFrom(res);
  if (!id)
    throw new NvueError(
      'Protocol',
      c.switchId,
      'POST',
      c.uri(path),
      `no action id in the answer: ${JSON.stringify(res.body)}`,
    );
  return id;
}

/**
 * Polls an action until it leaves the pending states; a failed action throws ActionFailed with its detail and issues.
 */
export async function waitForAction(
  c: NvueClient,
  actionId: string,
  opts: WaitForActionOptions = {},
): Promise<ActionResult> {
  const uri = c.uri(`/action/${encodeURIComponent(actionId)}`);
  let last: ActionStatus | undefined;
  const outcome = await poll({
    ...opts,
    client: c,
    uri,
    defaultIntervalMs: 5_000,
    defaultTimeoutMs: 1_800_000,
    describe: () =>
      `action ${actionId} still ${last?.state ?? 'unread'}${last?.percent !== undefined ? ` at ${last.percent}%` : ''}`,
    // During an install the switch reboots: 5xx and a forgotten action are expected until it is back.
    tolerate: (err) =>
      err.retryable || (opts.installHandoff === true && (err.status === 404 || (err.status ?? 0) >= 500)),
    onTolerated: (err) => opts.onProgress?.({ actionId, unreachable: err }),
    attempt: async () => {
      last = parseAction(
        await c.get(`/action/${encodeURIComponent(actionId)}`, opts.signal ? { signal: opts.signal } : {}),
      );
      opts.onProgress?.({ actionId, status: last });
      const o = classifyAction(last, opts.installHandoff);
      return o === 'pending' ? undefined : o;
    },
  });
  const a = last!;
  if (outcome === 'unknown')
    throw new NvueError(
      'Protocol',
      c.switchId,
      'GET',
      uri,
      `action ${actionId} is in an unknown state ${JSON.stringify(a.state)}`,
    );
  if (outcome === 'failed') {
    const why = [a.status, a.detail, ...a.issues].filter((s): s is string => !!s);
    throw new NvueError(
      'ActionFailed',
      c.switchId,
      'GET',
      uri,
      `action ${actionId} ${a.state}: ${why.join('; ') || 'no detail given'}`,
      {
        issues: why,
        ...(a.httpStatus ? { status: a.httpStatus } : {}),
      },
    );
  }
  return { actionId, state: a.state!, percent: a.percent, detail: a.detail, rebootHandoff: outcome === 'handoff' };
}

/** startAction then waitForAction. */
export async function runAction(
  c: NvueClient,
  path: string,
  body: unknown,
  opts: WaitForActionOptions = {},
): Promise<ActionResult> {
  const id = await startAction(c, path, body, opts.signal ? { signal: opts.signal } : {});
  return waitForAction(c, id, opts);
}

import type { CallOptions, NvueClient } from './client.js';
import { NvueError } from './errors.js';
import { poll, type PollOptions } from './poll.js';

/** One staged change: a path below /nvue_v1 (`/system/aaa/user/admin`) and its PATCH body. */
export interface ConfigChange {
  path: string;
  body: unknown;
}

export interface RevisionStatus {
  state: string | undefined;
  /** Messages of the revision's `transition.issue` map, in key order. */
  issues: string[];
}

export type RevisionOutcome = 'pending' | 'applied' | 'no-diff' | 'failed';

export interface ApplyResult {
  revision: string;
  /** The switch already had this configuration ("config apply executed with no config diff"). */
  noDiff: boolean;
}

const APPLY = { state: 'apply', 'auto-prompt': { ays: 'ays_yes' } };
const SAVE = { state: 'save', 'auto-prompt': { ays: 'ays_yes' } };
const NO_DIFF = 'config apply executed with no config diff';
// docs/reference/rms-behaviours.md#nvue-revisions: failed|error|invalid end an apply; Cumulus-style `*_fail` states
// (apply_fail, ays_fail) too.
const failedStates = /^(failed|error|invalid)$|_fail$/;

/**
 * The revision id a `POST /revision` answered: a JSON string (NVOS), a number, an object
 * with `id`/`rev`/`revision`, or Cumulus's `{ "<id>": { "state": … } }`.
 */
export function revisionIdFrom(body: unknown): string | undefined {
  if (typeof body === 'string' && body.trim()) return body.trim();
  if (typeof body === 'number') return String(body);
  if (typeof body !== 'object' || body === null) return undefined;
  const o = body as Record<string, unknown>;
  for (const key of ['id', 'rev', 'revision'])
    if (typeof o[key] === 'string' || typeof o[key] === 'number') return String(o[key]);
  const keys = Object.keys(o);
  const only = keys.length === 1 ? o[keys[0]!] : undefined;
  return typeof only === 'object' && only !== null && 'state' in only ? keys[0] : undefined;
}

export function parseRevision(body: unknown): RevisionStatus {
  const b = body as { state?: unknown; transition?: { issue?: unknown } } | undefined;
  const issueMap = b?.transition?.issue;
  const entries =
    issueMap && typeof issueMap === 'object'
      ? Object.entries(issueMap as Record<string, unknown>).sort(([a], [c]) => a.localeCompare(c))
      : [];
  const issues = entries.map(([, v]) =>
    typeof v === 'string' ? v : String((v as { message?: unknown })?.message ?? JSON.stringify(v)),
  );
  return { state: typeof b?.state === 'string' ? b.state : undefined, issues };
}

/** `applied` is OK; the no-diff issue is OK too and wins over a failed state (some builds report it as `invalid`). */
export function classifyRevision(r: RevisionStatus): RevisionOutcome {
  if (r.state === 'applied') return 'applied';
  if (r.issues.some((m) => m.toLowerCase().includes(NO_DIFF))) return 'no-diff';
  if (r.state && failedStates.test(r.state)) return 'failed';
  return 'pending';
}

export async function createRevision(c: NvueClient, opts: CallOptions = {}): Promise<string> {
  const res = await c.post('/revision', {}, opts);
  const id = revisionIdFrom(res.body);
  if (!id)
    throw new NvueError(
      'Protocol',
      c.switchId,
      'POST',
      c.uri('/revision'),
      `no revision id in the answer: ${JSON.stringify(res.body)}`,
    );
  return id;
}

export async function stageChange(
  c: NvueClient,
  revision: string,
  change: ConfigChange,
  opts: CallOptions = {},
): Promise<void> {
  await c.patch(change.path, change.body, { ...opts, query: { rev: revision } });
}

export async function applyRevision(c: NvueClient, revision: string, opts: CallOptions = {}): Promise<void> {
  await c.patch(`/revision/${encodeURIComponent(revision)}`, APPLY, opts);
}

export async function getRevision(c: NvueClient, revision: string, opts: CallOptions = {}): Promise<RevisionStatus> {
  return parseRevision(await c.get(`/revision/${encodeURIComponent(revision)}`, opts));
}

export interface RevisionWaitOptions extends PollOptions {
  /**
   * Called when the switch answers 401 while the apply runs (it changed the password the
   * client logs in with); returns true once the client uses credentials worth trying.
   */
  onUnauthenticated?: () => boolean;
}

/** Polls an applying revision; a failed apply throws ApplyFailed carrying the switch's issue texts. */
export async function waitForRevision(
  c: NvueClient,
  revision: string,
  opts: RevisionWaitOptions = {},
): Promise<{ noDiff: boolean }> {
  const uri = c.uri(`/revision/${encodeURIComponent(revision)}`);
  let last: RevisionStatus | undefined;
  const outcome = await poll({
    ...opts,
    client: c,
    uri,
    defaultIntervalMs: 1_000,
    defaultTimeoutMs: 120_000,
    describe: () => `revision ${revision} still ${last?.state ?? 'unread'}`,
    tolerate: (err) => err.retryable || (err.kind === 'Unauthenticated' && opts.onUnauthenticated?.() === true),
    attempt: async () => {
      last = await getRevision(c, revision, opts.signal ? { signal: opts.signal } : {});
      const o = classifyRevision(last);
      return o === 'pending' ? undefined : o;
    },
  });
  if (outcome === 'failed') {
    throw new NvueError(
      'ApplyFailed',
      c.switchId,
      'GET',
      uri,
      `revision ${revision} ${last!.state}: ${last!.issues.join('; ') || 'no issue given'}`,
      { issues: last!.issues },
    );
  }
  return { noDiff: outcome === 'no-diff' };
}

/** Persists the running configuration (it survives reboots from now on). */
export async function saveConfig(c: NvueClient, opts: CallOptions = {}): Promise<void> {
  await c.patch('/revision/applied', SAVE, opts);
}

/**
 * The whole configuration round: create a revision, stage every change into it, apply,
 * wait for the outcome, save. Nothing is saved when the apply fails.
 */
export async function applyConfig(
  c: NvueClient,
  changes: ConfigChange[],
  opts: RevisionWaitOptions = {},
): Promise<ApplyResult> {
  if (changes.length === 0) throw new RangeError('applyConfig needs at least one change');
  const call = opts.signal ? { signal: opts.signal } : {};
  const revision = await createRevision(c, call);
  for (const change of changes) await stageChange(c, revision, change, call);
  await applyRevision(c, revision, call);
  const { noDiff } = await waitForRevision(c, revision, opts);
  await saveConfig(c, call);
  return { revision, noDiff };
}

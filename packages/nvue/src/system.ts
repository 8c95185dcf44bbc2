import type { CallOptions, NvueClient } from './client.js';
import { startAction } from './actions.js';
import { NvueError } from './errors.js';
import type { NvueCredentials } from './options.js';
import { poll, type PollOptions } from './poll.js';
import { applyConfig, type ApplyResult } from './revisions.js';

export interface SystemVersion {
  /** The NVOS build id running. */
  build: string | undefined;
  productName: string | undefined;
  raw: Record<string, unknown>;
}

/** `GET /system`: the hello RMS uses as NVOS readiness. */
export function getSystem(c: NvueClient, opts: CallOptions = {}): Promise<Record<string, unknown>> {
  return c.getObject('/system', opts);
}

export async function getVersion(c: NvueClient, opts: CallOptions = {}): Promise<SystemVersion> {
  const raw = await c.getObject('/system/version', opts);
  const s = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { build: s(raw['image']) ?? s(raw['product-release']), productName: s(raw['product-name']), raw };
}

export interface ReadyOptions extends PollOptions {
  /**
   * Wait to see the switch go away first (after a power cycle the old NVOS may still answer
   * for a while); fails with Timeout if no outage is seen within this long.
   */
  outageWithinMs?: number;
  onPoll?: (reachable: boolean) => void;
}

/** Polls `GET /system` until it answers (after a reboot, NVOS is ready when NVUE is). */
export async function waitUntilReady(c: NvueClient, opts: ReadyOptions = {}): Promise<void> {
  const call = opts.signal ? { signal: opts.signal } : {};
  if (opts.outageWithinMs !== undefined) {
    await poll({
      ...opts,
      timeoutMs: opts.outageWithinMs,
      client: c,
      uri: c.uri('/system'),
      defaultIntervalMs: 1_000,
      defaultTimeoutMs: opts.outageWithinMs,
      describe: () => 'still answering: no outage seen',
      // Any answer, even a refusal of these credentials, means the old NVOS is still up.
      tolerate: (err) => !err.retryable,
      onTolerated: () => opts.onPoll?.(true),
      attempt: async () => {
        try {
          await getSystem(c, call);
          opts.onPoll?.(true);
          return undefined;
        } catch (err) {
          if (err instanceof NvueError && err.retryable) return true;
          throw err;
        }
      },
    });
  }
  await poll({
    ...opts,
    client: c,
    uri: c.uri('/system'),
    defaultIntervalMs: 15_000,
    defaultTimeoutMs: 600_000,
    describe: () => 'not answering',
    onTolerated: () => opts.onPoll?.(false),
    attempt: async () => {
      await getSystem(c, call);
      opts.onPoll?.(true);
      return true;
    },
  });
}

/** Starts a power cycle (the switch goes down at once); returns the action id. */
export function powerCycle(c: NvueClient, opts: CallOptions = {}): Promise<string> {
  return startAction(c, '/system', { '@power-cycle': { state: 'start', parameters: { force: true } } }, opts);
}

/**
 * Starts a full NVOS factory reset: afterwards only admin/admin logs in. Destructive;
 * returns the action id (the switch reboots, so RMS judges completion by a default-credential login).
 */
export function factoryReset(c: NvueClient, opts: CallOptions = {}): Promise<string> {
  return startAction(c, '/system/factory-default', { '@reset': { state: 'start', parameters: { force: true } } }, opts);
}

/**
 * Sets a user's password through a revision (NVUE takes it base64-encoded) and saves it.
 * When that user is the client's own, the switch refuses the old password as soon as the
 * apply lands: the client then moves to the new one (and back if the apply fails).
 */
export async function changePassword(
  c: NvueClient,
  user: string,
  password: string,
  opts: PollOptions = {},
): Promise<ApplyResult> {
  if (!password) throw new RangeError('the new password is empty');
  const change = {
    path: `/system/aaa/user/${encodeURIComponent(user)}`,
    body: { password: Buffer.from(password, 'utf8').toString('base64') },
  };
  if (c.username !== user) return applyConfig(c, [change], opts);
  let previous: NvueCredentials | undefined;
  const onUnauthenticated = () => {
    if (previous) return false;
    previous = c.useCredentials({ username: user, password });
    return true;
  };
  try {
    return await applyConfig(c, [change], { ...opts, onUnauthenticated });
  } catch (err) {
    if (previous && err instanceof NvueError && err.kind === 'ApplyFailed') c.useCredentials(previous);
    throw err;
  }
}

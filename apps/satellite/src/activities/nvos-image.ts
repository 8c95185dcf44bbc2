import { Context } from '@temporalio/activity';
import type { NvosImageReading, NvosTarget } from '@fleet/domain';
import { getImage, NvueError, type ImageState, type NvueClient } from '@fleet/nvue';
import { openNvue, type NvosAccess } from '../nvos/connect.js';
import { toActivityFailure } from './failures.js';

/** An NVUE client for the activity's switch, cancelled with the activity; errors leave as typed failures. */
export async function withNvue<T>(
  access: NvosAccess,
  target: NvosTarget,
  run: (c: NvueClient, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const signal = Context.current().cancellationSignal;
  let client: NvueClient | undefined;
  try {
    client = await openNvue(access, target, signal);
    return await run(client, signal);
  } catch (err) {
    throw toActivityFailure(err, target.deviceId);
  } finally {
    await client?.close();
  }
}

export function reading(target: NvosTarget, s: ImageState): NvosImageReading {
  return { deviceId: target.deviceId, current: s.current ?? null, next: s.next ?? null };
}

/**
 * What a switch shows while it reboots (docs/reference/rms-behaviours.md#switch-reboots): no answer, or an HTTP error
 * from a half-started NVUE.
 */
function rebooting(err: unknown): err is NvueError {
  return err instanceof NvueError && (err.retryable || (err.status ?? 0) >= 500);
}

export interface ImagePoll<T> {
  intervalMs: number;
  timeoutMs: number;
  /** One answer: a value ends the wait, undefined means not yet (throwing ends it too). */
  accept(state: ImageState): T | undefined;
  /** Why the wait ended without a value, for the error; `last` is the last answer, if any. */
  timedOut(last: ImageState | undefined, lastError: NvueError | undefined): Error;
  /** Called after every look that did not end the wait: the caller heartbeats its own details. */
  heartbeat(reachable: boolean, last: ImageState | undefined): void;
}

/**
 * Reads GET /system/image until `accept` takes an answer, riding over a reboot (refused
 * connections, 5xx); sleeps through the activity context, so a cancellation ends the wait.
 */
export async function pollImage<T>(c: NvueClient, signal: AbortSignal, poll: ImagePoll<T>): Promise<T> {
  const ctx = Context.current();
  const deadline = Date.now() + poll.timeoutMs;
  let last: ImageState | undefined;
  let lastError: NvueError | undefined;
  for (;;) {
    try {
      last = await getImage(c, { signal });
      lastError = undefined;
      const value = poll.accept(last);
      if (value !== undefined) return value;
    } catch (err) {
      if (!rebooting(err)) throw err;
      lastError = err;
    }
    poll.heartbeat(lastError === undefined, last);
    if (Date.now() + poll.intervalMs > deadline) throw poll.timedOut(last, lastError);
    await ctx.sleep(poll.intervalMs);
  }
}

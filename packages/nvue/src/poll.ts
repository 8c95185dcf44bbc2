import type { NvueClient } from './client.js';
import { NvueError } from './errors.js';
import { sleep } from '@fleet/http';

export interface PollOptions {
  pollIntervalMs?: number;
  /** Give up (NvueError Timeout) after this long. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface PollSpec<T> extends PollOptions {
  client: NvueClient;
  /** The URI polled, for the timeout error. */
  uri: string;
  defaultIntervalMs: number;
  defaultTimeoutMs: number;
  /** One look: a value ends the wait, undefined means not yet. */
  attempt(): Promise<T | undefined>;
  /** Errors that mean "not yet" rather than failure; the client's retryable ones by default. */
  tolerate?(err: NvueError): boolean;
  /** Told about each tolerated error (heartbeats continue while the switch is unreachable). */
  onTolerated?(err: NvueError): void;
  /** Where things stood, for the timeout message. */
  describe(): string;
}

/** Calls `attempt` every interval until it yields a value, a non-tolerated error, or the deadline. */
export async function poll<T>(spec: PollSpec<T>): Promise<T> {
  const interval = spec.pollIntervalMs ?? spec.defaultIntervalMs;
  const deadline = Date.now() + (spec.timeoutMs ?? spec.defaultTimeoutMs);
  const tolerate = spec.tolerate ?? ((err: NvueError) => err.retryable);
  let lastError: NvueError | undefined;
  for (;;) {
    try {
      const value = await spec.attempt();
      lastError = undefined;
      if (value !== undefined) return value;
    } catch (err) {
      if (!(err instanceof NvueError) || !tolerate(err)) throw err;
      lastError = err;
      spec.onTolerated?.(err);
    }
    if (Date.now() + interval > deadline) {
      const last = lastError ? ` (last error: ${lastError.causeText})` : '';
      throw new NvueError(
        'Timeout',
        spec.client.switchId,
        'GET',
        spec.uri,
        `${spec.describe()} at the deadline${last}`,
      );
    }
    await sleep(interval, spec.signal);
  }
}

import { EventStream, sleep, type HubEvent } from './events.js';
import type { Hub } from './hub.js';

export interface WatchOptions {
  /** Re-read interval without the event stream (an older hub). */
  pollMs: number;
  /** Re-read interval while the stream is open: an event lost in a reconnect costs at most this. */
  safetyPollMs: number;
}

/**
 * Runs `tick` now and again whenever a relevant hub event arrives (or, without the event stream, every `pollMs`),
 * until it returns true.
 */
export async function watch(
  hub: Hub,
  relevant: (event: HubEvent) => boolean,
  tick: () => Promise<boolean>,
  options: WatchOptions,
): Promise<void> {
  if (await tick()) return;
  let wake: (() => void) | undefined;
  let dirty = false;
  const stream = new EventStream(
    hub,
    (event) => {
      if (!relevant(event)) return;
      dirty = true;
      wake?.();
    },
    () => wake?.(),
  );
  try {
    for (;;) {
      if (!dirty) {
        const timer = new AbortController();
        await new Promise<void>((resolve) => {
          wake = resolve;
          const wait = stream.state === 'open' ? options.safetyPollMs : options.pollMs;
          void sleep(wait, timer.signal).then(resolve);
        });
        timer.abort();
        wake = undefined;
      }
      dirty = false;
      if (await tick()) return;
    }
  } finally {
    stream.close();
  }
}

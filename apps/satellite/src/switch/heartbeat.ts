import { Context } from '@temporalio/activity';
import { heartbeatEveryMs } from '../heartbeat-every.js';

/**
 * Runs `work`, heartbeating `details()` on a clock meanwhile, for calls that report no progress
 * of their own (a revision apply, a stalled transfer): the activity stays alive within its
 * heartbeat timeout and still learns of its cancellation.
 */
export async function heartbeatWhile<T>(details: () => unknown, work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(details()), heartbeatEveryMs(ctx.info));
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}

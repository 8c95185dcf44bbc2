import type { Info } from '@temporalio/activity';

/**
 * How often an activity heartbeats while it has no progress of its own to report: three times per heartbeat timeout, so
 * one late beat does not time it out, and at least every 5 s, so a cancellation is heard within seconds.
 */
export function heartbeatEveryMs(info: Pick<Info, 'heartbeatTimeoutMs'>): number {
  return Math.min(5_000, (info.heartbeatTimeoutMs ?? 15_000) / 3);
}

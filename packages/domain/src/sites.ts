/**
 * Site removal and satellite liveness (docs/deployment.md, "Sites").
 *
 * A site is `active`, `draining` (DELETE /v1/sites/{id} was asked: no new jobs, running ones finish) or `removed`
 * (drained: gone from lists, its jobs and audit kept).
 */
export const siteStates = ['active', 'draining', 'removed'] as const;
export type SiteState = (typeof siteStates)[number];

export function siteState(s: { drainingSince: Date | null; removedAt: Date | null }): SiteState {
  return s.removedAt ? 'removed' : s.drainingSince ? 'draining' : 'active';
}

export const satelliteStates = ['connected', 'disconnected', 'unknown'] as const;
export type SatelliteState = (typeof satelliteStates)[number];

/**
 * Temporal lists a task queue's pollers with the time each last polled. An idle worker's poll is a long poll the
 * server answers empty after a minute, and the worker polls again at once: a live satellite's newest poll is at most
 * about this old.
 */
export const temporalLongPollS = 60;

/**
 * A satellite is disconnected when its newest poll is older than this: one long poll, plus two liveness checks of the
 * workflow agent (10 s apart by default) between Temporal's answer and the reader, plus slack. Temporal itself keeps
 * a poller in its list for five minutes after its last poll, so a listed poller alone does not mean connected.
 */
export const satelliteSilenceLimitS = temporalLongPollS + 30;

/** With no liveness check newer than this (no workflow agent checks), the state is unknown rather than stale. */
export const satelliteCheckStaleS = 60;

/** The satellite's state from the agent's last check; undefined: never checked. */
export function satelliteState(
  check: { lastSeenAt: Date | null; checkedAt: Date } | undefined,
  now: Date,
): SatelliteState {
  if (!check || now.getTime() - check.checkedAt.getTime() > satelliteCheckStaleS * 1000) return 'unknown';
  if (!check.lastSeenAt) return 'disconnected';
  return now.getTime() - check.lastSeenAt.getTime() > satelliteSilenceLimitS * 1000 ? 'disconnected' : 'connected';
}

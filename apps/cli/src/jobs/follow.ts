import { unwrap, type Job } from '@fleet/client';
import type { HubEvent } from '../api/events.js';
import type { Hub } from '../api/hub.js';
import { watch } from '../api/watch.js';

export const terminalStates = new Set(['succeeded', 'failed', 'cancelled']);
export const isTerminal = (job: { state: string }): boolean => terminalStates.has(job.state);

export async function getJob(hub: Hub, id: string): Promise<Job> {
  return unwrap(hub.api.GET('/v1/jobs/{id}', { params: { path: { id } } }));
}

/** Whether an event may change what `GET /v1/jobs/{id}` answers: the job itself, a child, or its campaign. */
export function concernsJob(event: HubEvent, jobId: string): boolean {
  const d = event.data;
  const job = d['job'] as Record<string, unknown> | undefined;
  return [d['id'], d['job_id'], d['parent_id'], d['campaign_id'], job?.['id']].includes(jobId);
}

/** A campaign that finished its canary and waits for `campaign approve`. */
export const awaitsApproval = (job: Job): boolean => !isTerminal(job) && job.progress?.stage === 'awaiting_approval';

/**
 * Follows a job until it ends (or `stopWhen` holds), calling `onUpdate` with every new version of it (the first read
 * included), and returns the last one. Live through the hub's event stream; by reading the job every second when the
 * hub has none.
 */
export async function followJob(
  hub: Hub,
  id: string,
  onUpdate: (job: Job) => void,
  stopWhen: (job: Job) => boolean = () => false,
): Promise<Job> {
  let last: string | undefined;
  let job: Job | undefined;
  await watch(
    hub,
    (event) => concernsJob(event, id),
    async () => {
      job = await getJob(hub, id);
      const text = JSON.stringify(job);
      if (text !== last) onUpdate(job);
      last = text;
      return isTerminal(job) || stopWhen(job);
    },
    { pollMs: 1000, safetyPollMs: 15_000 },
  );
  return job!;
}

import type { Job } from '@fleet/client';
import { isTerminal } from './follow.js';

export type Decision = NonNullable<NonNullable<Job['progress']>['decision']>;

/** The failed stage an enrolment or burn-in waits at until someone runs `fleetctl job decide`, if any. */
export function pendingDecision(job: Job): Decision | undefined {
  return isTerminal(job) ? undefined : (job.progress?.decision ?? undefined);
}

/** The waiting stage, each waiting device with why, and the command that answers. */
export function decisionLines(job: Job, decision: Decision): string[] {
  const devices = Object.entries(decision.devices);
  return [
    `stage ${decision.stage} waits for a decision since ${decision.since} (${devices.length} device(s)):`,
    ...devices.map(([id, why]) => `  ${id}: ${why}`),
    `decide with: fleetctl job decide ${job.id} retry|skip|reject --reason <text> [--device <id> ...]`,
  ];
}

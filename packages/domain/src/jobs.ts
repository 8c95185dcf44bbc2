import { z } from 'zod';
import type { AwaitedDecision } from './enrolment.js';
import type { ErrorCode } from './errors.js';
import { jobKinds } from './job-kinds.js';

export const jobStates = ['queued', 'running', 'succeeded', 'failed', 'cancelling', 'cancelled'] as const;
export const JobState = z.enum(jobStates);
export type JobState = z.infer<typeof JobState>;

export const terminalJobStates: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];
export function isTerminal(state: JobState): boolean {
  return terminalJobStates.includes(state);
}

export { jobKinds } from './job-kinds.js';
/** Job kinds as a zod enum, derived from the job-kind registry (job-kinds.ts). */
export const JobKind = z.enum(jobKinds);
export type JobKind = z.infer<typeof JobKind>;

export const intentKinds = ['start', 'cancel', 'signal'] as const;
export type IntentKind = (typeof intentKinds)[number];

export interface JobProgress {
  stage: string;
  percent?: number;
  message?: string;
  /** A stage that failed and waits for an operator's decision (POST /v1/jobs/{id}/decision). */
  decision?: AwaitedDecision;
}

export interface JobError {
  code: ErrorCode | string;
  message: string;
  details?: unknown;
}

/** One device's part in a rack or batch job, as its child job row shows it. */
export interface DeviceOutcome {
  state: JobState;
  powerState?: string;
  message?: string;
  error?: JobError;
}

export type StageStatus = 'queued' | 'running' | 'completed' | 'failed' | 'skipped' | 'cancelled';

export interface Stage {
  name: string;
  status: StageStatus;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  durationS?: number;
}

export interface StageTimeline {
  currentStage: string | null;
  stages: Stage[];
}

/**
 * A parent's state from its children (RMS rules, docs/reference/rms-behaviours.md#batch-jobs): all terminal and none
 * failed → succeeded; all terminal and some failed → failed, "Batch complete: ...";
 * otherwise running.
 */
export function aggregateChildren(counts: Partial<Record<JobState, number>>): { state: JobState; message: string } {
  const n = (s: JobState) => counts[s] ?? 0;
  const total = Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
  const done = n('succeeded') + n('failed') + n('cancelled');
  if (total === 0) return { state: 'succeeded', message: 'no devices' };
  if (done < total) return { state: 'running', message: `${done}/${total} devices done, ${n('failed')} failed` };
  const failed = n('failed') + n('cancelled');
  if (failed === 0) return { state: 'succeeded', message: `Batch complete: ${total}/${total} succeeded` };
  return { state: 'failed', message: `Batch complete: ${n('succeeded')}/${total} succeeded, ${failed} failed` };
}

/**
 * What a workflow publishes about itself through its memo, so that the workflow agent
 * can project progress, result and error with one visibility listing per page of jobs.
 */
export interface JobMemo {
  progress?: JobProgress;
  result?: Record<string, unknown>;
  error?: JobError;
  /** RMS StageTimeline of a staged job (rack power, cold reboot). */
  timeline?: StageTimeline;
  /** Per-device outcomes of a rack job, by device id: projected onto its child jobs. */
  devices?: Record<string, DeviceOutcome>;
}

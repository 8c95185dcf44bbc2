import { z } from 'zod';
import type { ErrorCode } from './errors.js';

export const jobStates = ['queued', 'running', 'succeeded', 'failed', 'cancelling', 'cancelled'] as const;
export const JobState = z.enum(jobStates);
export type JobState = z.infer<typeof JobState>;

export const terminalJobStates: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];
export function isTerminal(state: JobState): boolean {
  return terminalJobStates.includes(state);
}

export const jobKinds = ['device.power'] as const;
export const JobKind = z.enum(jobKinds);
export type JobKind = z.infer<typeof JobKind>;

export const intentKinds = ['start', 'cancel'] as const;
export type IntentKind = (typeof intentKinds)[number];

export interface JobProgress {
  stage: string;
  percent?: number;
  message?: string;
}

export interface JobError {
  code: ErrorCode | string;
  message: string;
  details?: unknown;
}

/**
 * What a workflow publishes about itself through its memo, so that the workflow agent
 * can project progress, result and error with one visibility listing per page of jobs.
 */
export interface JobMemo {
  progress?: JobProgress;
  result?: Record<string, unknown>;
  error?: JobError;
}



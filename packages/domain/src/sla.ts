/**
 * Stuck-state SLAs (docs/sla.md): how long a device may stay in one lifecycle state, a top-level job may wait queued
 * or run, and a job may show one stage of its progress (a campaign's phase, an enrolment's wait for a decision) before
 * Fleet escalates. Pure: the workflow agent finds the breaches in Postgres with these limits and judges them here.
 * Dependency-free (no zod).
 */
import { jobKinds, type JobKind } from './job-kinds.js';
import type { FleetLifecycleState } from './lifecycle.js';

const minute = 60;
const hour = 3600;
const day = 86_400;

/** Seconds an object may stay; null: not watched. */
export type SlaLimit = number | null;

export interface SlaPolicy {
  /** A device in this Fleet lifecycle state longer than this (since its last lifecycle move). */
  lifecycle: Record<FleetLifecycleState, SlaLimit>;
  /** A top-level job of this kind started (running or cancelling) longer than this. */
  jobRunning: Partial<Record<JobKind, SlaLimit>>;
  /** The running limit of a kind jobRunning does not name, so a new job kind is watched from its first job. */
  jobRunningDefault: SlaLimit;
  /** A top-level job still queued this long after it was created: its start has not reached Temporal. */
  jobQueued: SlaLimit;
  /**
   * A top-level job of this kind showing one progress stage longer than this, by stage. A stage is named by its first
   * word (slaStage), so `wave 2/5` is `wave` and each wave has the limit anew.
   */
  jobStages: Partial<Record<JobKind, Record<string, SlaLimit>>>;
}

/**
 * The defaults: generous enough that a healthy rack never trips them (an NVL72 enrolment's verification and firmware
 * baseline take about an hour, its burn-in a few), short enough that a forgotten device is found within a shift.
 */
export const defaultSlaPolicy: SlaPolicy = {
  lifecycle: {
    discovered: null,
    enrolling: 2 * hour,
    enrolled: null,
    burning_in: 12 * hour,
    certified: null,
    in_service: null,
    failed: 72 * hour,
    quarantined: 72 * hour,
    remediating: 24 * hour,
    rma: 30 * day,
    decommissioned: null,
  },
  jobRunning: {
    'device.power': 15 * minute,
    'device.bmc_reset': 30 * minute,
    'device.power_refresh': 10 * minute,
    'batch.power': hour,
    'rack.power': hour,
    'rack.cold_reboot': 2 * hour,
    'device.firmware_update': 4 * hour,
    'device.firmware_refresh': 30 * minute,
    // Weeks are normal for a campaign: its phases are watched instead.
    'firmware.campaign': null,
    'switch.nvos_install': 2 * hour,
    'switch.password_rotation': 30 * minute,
    'switch.factory_reset': hour,
    'switch.firmware_update': 4 * hour,
    'switch.certificate_install': 30 * minute,
    'bmc.password_rotation': 30 * minute,
    'rack.bmc_password_rotation': 2 * hour,
    'rack.enrol': 24 * hour,
    'device.enrol': 24 * hour,
    'device.burn_in': 16 * hour,
    'device.remediate': 4 * hour,
  },
  jobRunningDefault: hour,
  jobQueued: 15 * minute,
  jobStages: {
    'firmware.campaign': {
      starting: hour,
      canary: 6 * hour,
      awaiting_approval: 3 * day,
      wave: 12 * hour,
      paused: 3 * day,
      // Windows are weekly: a campaign may wait most of a week for the next one.
      waiting_for_maintenance_window: 8 * day,
    },
    'rack.enrol': { awaiting_decision: 8 * hour },
    'device.enrol': { awaiting_decision: 8 * hour },
    'device.burn_in': { awaiting_decision: 8 * hour },
    // A remediation past the blast-radius limit waits for a person's approval.
    'device.remediate': { blast_radius: 8 * hour },
  },
};

/** Overrides of the defaults, as a config gives them: a number replaces a limit, null stops watching it. */
export interface SlaOverrides {
  lifecycle?: Partial<Record<FleetLifecycleState, SlaLimit>>;
  jobRunning?: Partial<Record<JobKind, SlaLimit>>;
  jobRunningDefault?: SlaLimit;
  jobQueued?: SlaLimit;
  jobStages?: Partial<Record<JobKind, Record<string, SlaLimit>>>;
}

/** The defaults with the overrides applied (a job kind's stages merge stage by stage). */
export function slaPolicyWith(overrides: SlaOverrides, base: SlaPolicy = defaultSlaPolicy): SlaPolicy {
  const jobStages = { ...base.jobStages };
  for (const [kind, stages] of Object.entries(overrides.jobStages ?? {}) as [JobKind, Record<string, SlaLimit>][])
    jobStages[kind] = { ...jobStages[kind], ...stages };
  return {
    lifecycle: { ...base.lifecycle, ...overrides.lifecycle },
    jobRunning: { ...base.jobRunning, ...overrides.jobRunning },
    jobRunningDefault: overrides.jobRunningDefault === undefined ? base.jobRunningDefault : overrides.jobRunningDefault,
    jobQueued: overrides.jobQueued === undefined ? base.jobQueued : overrides.jobQueued,
    jobStages,
  };
}

/** What is watched: a device's lifecycle state, a job's running or queued time, or the stage a job shows. */
export type SlaSubject =
  | { watch: 'lifecycle'; state: FleetLifecycleState }
  | { watch: 'job_running'; kind: JobKind }
  | { watch: 'job_queued' }
  | { watch: 'job_stage'; kind: JobKind; stage: string };
export type SlaWatch = SlaSubject['watch'];
export const slaWatches = ['lifecycle', 'job_running', 'job_queued', 'job_stage'] as const satisfies SlaWatch[];

/** What a breach is about; a firmware campaign is a job whose id is the campaign's. */
export const slaObjectTypes = ['device', 'job', 'campaign'] as const;
export type SlaObjectType = (typeof slaObjectTypes)[number];

/** A job's stage as a policy names it: its first word (`wave 2/5` → `wave`). */
export function slaStage(stage: string): string {
  return stage.trim().split(/\s+/, 1)[0] ?? '';
}

/**
 * The breach key (metrics label, API filter, one open breach per object and key): `lifecycle:enrolling`,
 * `job_running:device.enrol`, `job_queued`, `job_stage:firmware.campaign:awaiting_approval`.
 */
export function slaKey(subject: SlaSubject): string {
  switch (subject.watch) {
    case 'lifecycle':
      return `lifecycle:${subject.state}`;
    case 'job_running':
      return `job_running:${subject.kind}`;
    case 'job_queued':
      return 'job_queued';
    case 'job_stage':
      return `job_stage:${subject.kind}:${slaStage(subject.stage)}`;
  }
}

/** The policy's limit for a subject; null when it is not watched. */
export function slaLimit(policy: SlaPolicy, subject: SlaSubject): SlaLimit {
  switch (subject.watch) {
    case 'lifecycle':
      return policy.lifecycle[subject.state] ?? null;
    case 'job_running': {
      const limit = policy.jobRunning[subject.kind];
      return limit === undefined ? policy.jobRunningDefault : limit;
    }
    case 'job_queued':
      return policy.jobQueued;
    case 'job_stage':
      return policy.jobStages[subject.kind]?.[slaStage(subject.stage)] ?? null;
  }
}

/** Every watched subject with its limit: what the agent asks Postgres about (a stage subject names its stage). */
export function watchedSlas(policy: SlaPolicy): { subject: SlaSubject; limitS: number }[] {
  const out: { subject: SlaSubject; limitS: number }[] = [];
  const add = (subject: SlaSubject, limitS: SlaLimit) => {
    if (limitS !== null) out.push({ subject, limitS });
  };
  for (const [state, limit] of Object.entries(policy.lifecycle) as [FleetLifecycleState, SlaLimit][])
    add({ watch: 'lifecycle', state }, limit);
  for (const kind of jobKinds) add({ watch: 'job_running', kind }, slaLimit(policy, { watch: 'job_running', kind }));
  add({ watch: 'job_queued' }, policy.jobQueued);
  for (const [kind, stages] of Object.entries(policy.jobStages) as [JobKind, Record<string, SlaLimit>][])
    for (const [stage, limit] of Object.entries(stages)) add({ watch: 'job_stage', kind, stage }, limit);
  return out;
}

export interface SlaVerdict {
  /** In the state longer than the limit. */
  breached: boolean;
  limitS: number;
  /** When the limit runs out (or ran out). */
  dueAt: Date;
  /** Seconds past the limit; negative: seconds left. */
  overdueS: number;
}

/** Whether an object in its state since `since` is past `limitS` at `now`, and by how much; undefined: not watched. */
export function judgeSla(limitS: SlaLimit, since: Date, now: Date): SlaVerdict | undefined {
  if (limitS === null) return undefined;
  const dueAt = new Date(since.getTime() + limitS * 1000);
  const overdueS = (now.getTime() - dueAt.getTime()) / 1000;
  return { breached: overdueS > 0, limitS, dueAt, overdueS };
}

/** How a breach ended: its object is no longer past that limit since that time, or the policy stopped watching. */
export const slaResolutions = ['cleared', 'unwatched'] as const;
export type SlaResolution = (typeof slaResolutions)[number];

/** The events a webhook may subscribe to. */
export const slaEvents = ['sla.breached', 'sla.resolved'] as const;
export type SlaEvent = (typeof slaEvents)[number];

import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { CampaignDevice, CampaignSummary } from '@fleet/db';
import {
  CampaignPolicy,
  JobState,
  type CampaignPlan,
  type ComponentResult,
  type DeviceFirmwareResult,
  type MaintenanceWindowSpec,
  type PlannedDevice,
} from '@fleet/domain';
import { etag } from '../firmware/preconditions.js';
import { JobErrorView, JobView, jobView, pageOf, timestamp, uuid, type ViewContext } from '../views.js';
import type { DraftPlan } from './planner.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

// Response schemas of the campaign routes; each view returns its schema's type.

const Excluded = z.object({ device_id: uuid, name: z.string(), reason: z.string() });
const waveKind = z.enum(['canary', 'wave']);

export const PlanView = z
  .object({
    devices: z.array(
      z.object({
        device_id: uuid,
        name: z.string(),
        rack_id: uuid.nullable(),
        power_domain: z.string(),
        node_type: z.string(),
        manifest_id: uuid,
        components: z.array(z.object({ id: z.string(), from: z.string().nullable(), to: z.string() })),
      }),
    ),
    waves: z.array(z.object({ index: z.number().int(), kind: waveKind, device_ids: z.array(uuid) })),
    excluded: z.array(Excluded),
    estimated_duration_s: z.number(),
    lower_bound_s: z.number(),
  })
  .meta({ id: 'CampaignPlan' });
/** A dry run's answer. */
export const DryRunView = z.object({ plan: PlanView });

export const CampaignDeviceView = z
  .object({
    device_id: uuid.nullable(),
    name: z.string(),
    rack_id: uuid.nullable(),
    node_type: z.string().nullable(),
    job_id: uuid,
    state: JobState,
    /** The device's outcome once its workflow reported one. */
    status: z.enum(['updated', 'skipped', 'failed']).nullable(),
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    components: z.array(
      z.object({
        id: z.string(),
        from: z.string().nullable(),
        to: z.string(),
        installed: z.string().nullable(),
        status: z.enum(['planned', 'updated', 'skipped', 'failed', 'cancelled']),
        code: z.string().nullable(),
        message: z.string().nullable(),
      }),
    ),
    error: JobErrorView.nullable(),
  })
  .meta({ id: 'CampaignDevice' });
export const CampaignDevicePage = pageOf(CampaignDeviceView, 'CampaignDevicePage');

export const CampaignView = z
  .object({
    id: uuid,
    name: z.string(),
    site_id: z.string(),
    created_by: z.string(),
    created_at: timestamp,
    policy: CampaignPolicy,
    plan: z.object({
      devices: z.number().int(),
      waves: z.array(z.object({ index: z.number().int(), kind: waveKind, devices: z.number().int() })),
      estimated_duration_s: z.number(),
      lower_bound_s: z.number().nullable(),
      excluded_count: z.number().int(),
      /** In the detail only. */
      excluded: z.array(Excluded).optional(),
    }),
    job: JobView,
    /** In the detail only: the first device failures. */
    failures: z.array(CampaignDeviceView).optional(),
    links: z.object({ self: z.string(), devices: z.string(), job: z.string() }),
  })
  .meta({ id: 'Campaign' });
export const CampaignPage = pageOf(CampaignView, 'CampaignPage');

export const WindowsView = z
  .object({
    windows: z.array(
      z.object({ weekdays: z.array(z.number().int()), start: z.string(), duration_minutes: z.number().int() }),
    ),
  })
  .meta({ id: 'MaintenanceWindows' });

const excludedView = (e: CampaignPlan['excluded'][number]) => ({
  device_id: e.deviceId,
  name: e.name,
  reason: e.reason,
});

/** A dry run's answer: the whole plan. */
export function planView(p: DraftPlan): z.infer<typeof PlanView> {
  return {
    devices: p.devices.map((d) => ({
      device_id: d.deviceId,
      name: d.name,
      rack_id: d.rackId,
      power_domain: d.powerDomain,
      node_type: d.nodeType,
      manifest_id: d.manifestId,
      components: d.components,
    })),
    waves: p.waves.map((w) => ({ index: w.index, kind: w.kind, device_ids: w.deviceIds })),
    excluded: p.excluded.map(excludedView),
    estimated_duration_s: p.estimatedDurationS,
    lower_bound_s: p.lowerBoundS,
  };
}

/** One device of a campaign: its job and, per component, the result its workflow reported (or the plan until then). */
export function campaignDeviceView(d: CampaignDevice): z.infer<typeof CampaignDeviceView> {
  const result = d.job.result as Partial<DeviceFirmwareResult> | null;
  const planned = (d.job.params['components'] ?? []) as PlannedDevice['components'];
  const components = result?.components
    ? result.components.map((c: ComponentResult) => ({
        id: c.id,
        from: c.from,
        to: c.to,
        installed: c.installed,
        status: c.status,
        code: c.code,
        message: c.message ?? null,
      }))
    : planned.map((c) => ({
        id: c.id,
        from: c.from,
        to: c.to,
        installed: null,
        status: 'planned' as const,
        code: null,
        message: null,
      }));
  return {
    device_id: d.job.deviceId,
    name: d.name,
    rack_id: d.rackId,
    node_type: d.nodeType,
    job_id: d.job.id,
    state: d.job.state as JobState,
    status: result?.status ?? null,
    started_at: iso(d.job.startedAt),
    finished_at: iso(d.job.finishedAt),
    components,
    error: (d.job.error ?? null) as z.infer<typeof JobErrorView> | null,
  };
}

/**
 * A campaign: its plan in summary, and its job (state, the phase the workflow publishes as
 * progress, children by state). The detail adds the devices left out and the first failures.
 */
export function campaignView(
  c: CampaignSummary,
  views: ViewContext,
  children: Partial<Record<JobState, number>>,
  detail?: { excluded: CampaignPlan['excluded']; failures: CampaignDevice[] },
): z.infer<typeof CampaignView> {
  return {
    id: c.id,
    name: c.name,
    site_id: c.siteId,
    created_by: c.createdBy,
    created_at: c.createdAt.toISOString(),
    policy: c.policy,
    plan: {
      devices: c.deviceCount,
      waves: c.waves,
      estimated_duration_s: c.estimatedDurationS,
      lower_bound_s: c.lowerBoundS,
      excluded_count: c.excludedCount,
      ...(detail ? { excluded: detail.excluded.map(excludedView) } : {}),
    },
    job: jobView(c.job, views, children),
    ...(detail ? { failures: detail.failures.map(campaignDeviceView) } : {}),
    links: {
      self: `/v1/firmware-campaigns/${c.id}`,
      devices: `/v1/firmware-campaigns/${c.id}/devices`,
      job: `/v1/jobs/${c.id}`,
    },
  };
}

const hhmm = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

/** A site's windows, earliest start of day first (Postgres keeps no order of its own), and their ETag. */
export function windowsView(windows: MaintenanceWindowSpec[]) {
  const sorted = [...windows].sort((a, b) => a.startMinute - b.startMinute || a.durationMinutes - b.durationMinutes);
  const view: z.infer<typeof WindowsView> = {
    windows: sorted.map((w) => ({
      weekdays: w.weekdays,
      start: hhmm(w.startMinute),
      duration_minutes: w.durationMinutes,
    })),
  };
  return { view, etag: etag(createHash('sha256').update(JSON.stringify(view)).digest('base64url').slice(0, 22)) };
}

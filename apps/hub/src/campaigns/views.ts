import { createHash } from 'node:crypto';
import type { CampaignDevice, CampaignSummary } from '@fleet/db';
import type {
  CampaignPlan,
  ComponentResult,
  DeviceFirmwareResult,
  JobState,
  MaintenanceWindowSpec,
  PlannedDevice,
} from '@fleet/domain';
import { etag } from '../firmware/preconditions.js';
import { jobView, type ViewContext } from '../views.js';
import type { DraftPlan } from './planner.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const excludedView = (e: CampaignPlan['excluded'][number]) => ({
  device_id: e.deviceId,
  name: e.name,
  reason: e.reason,
});

/** A dry run's answer: the whole plan. */
export function planView(p: DraftPlan) {
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
export function campaignDeviceView(d: CampaignDevice) {
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
        status: 'planned',
        code: null,
        message: null,
      }));
  return {
    device_id: d.job.deviceId,
    name: d.name,
    rack_id: d.rackId,
    node_type: d.nodeType,
    job_id: d.job.id,
    state: d.job.state,
    status: result?.status ?? null,
    started_at: iso(d.job.startedAt),
    finished_at: iso(d.job.finishedAt),
    components,
    error: d.job.error ?? null,
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
) {
  return {
    id: c.id,
    name: c.name,
    site_id: c.siteId,
    created_by: c.createdBy,
    created_at: iso(c.createdAt),
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
  const view = {
    windows: sorted.map((w) => ({
      weekdays: w.weekdays,
      start: hhmm(w.startMinute),
      duration_minutes: w.durationMinutes,
    })),
  };
  return { view, etag: etag(createHash('sha256').update(JSON.stringify(view)).digest('base64url').slice(0, 22)) };
}

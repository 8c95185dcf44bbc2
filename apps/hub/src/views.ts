import type {
  AuditRow,
  Device,
  DeviceFirmware,
  DeviceStatus,
  Interface,
  InventoryIssue,
  IpAddress,
  Job,
  Rack,
  RackDeviceSummary,
  Site,
  SiteSatellite,
  SyncState,
} from '@fleet/db';
import { z } from 'zod';
import {
  decisionActions,
  JobKind,
  JobState,
  Role,
  satelliteState,
  satelliteStates,
  siteState,
  siteStates,
  siteTaskQueue,
} from '@fleet/domain';
import type { Reply } from './route.js';
import { workflowIdOf } from './services/parent-jobs.service.js';
import {
  ConditionView,
  conditionView,
  LifecycleView,
  lifecycleView,
  RackDeviceSummaryView,
  rackDeviceSummaryView,
} from './status-views.js';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

// The response schemas: each view below returns its schema's type, so the two cannot drift apart, and the route
// table documents them in /openapi.json. Ids name the ones shared across routes (components.schemas).

export const uuid = z.uuid();
export const timestamp = z.iso.datetime();
const nullableTimestamp = timestamp.nullable();

/** A page of a list: `next_cursor` is null on the last one. */
export const pageOf = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ items: z.array(item), next_cursor: z.string().nullable() }).meta({ id });

const Provenance = z
  .discriminatedUnion('source', [
    z.object({ source: z.literal('api') }),
    z.object({
      source: z.literal('netbox'),
      netbox_id: z.number().int(),
      netbox_url: z.string().nullable(),
      netbox_last_updated: nullableTimestamp,
      last_synced_at: nullableTimestamp,
      stale: z.boolean(),
    }),
  ])
  .meta({ id: 'Provenance' });

export const SyncView = z
  .object({
    source: z.literal('netbox'),
    url: z.string().nullable(),
    stale: z.boolean(),
    last_success_at: nullableTimestamp,
    last_full_sync_at: nullableTimestamp,
    last_attempt_at: nullableTimestamp,
    last_error: z.string().nullable(),
  })
  .meta({ id: 'SyncState' });

export const SatelliteView = z
  .object({
    status: z
      .enum(satelliteStates)
      .describe(
        'connected: a poller of the site task queue polled within the silence limit (90 s); disconnected: none did; ' +
          'unknown: no liveness check by the workflow agent for a minute, or none yet (docs/deployment.md, "Sites")',
      ),
    pollers: z.number().int().describe('Pollers Temporal lists on the task queue (it keeps one listed for 5 min)'),
    last_seen_at: timestamp.nullable().describe('The newest poll of any of them, as Temporal recorded it'),
  })
  .meta({ id: 'SiteSatellite' });

export const SiteView = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.string().nullable().describe('NetBox status'),
    state: z
      .enum(siteStates)
      .describe(
        'active; draining: removal asked, no new jobs, running ones finish; removed: drained, kept for history',
      ),
    draining_since: timestamp.nullable(),
    removed_at: timestamp.nullable(),
    task_queue: z.string().describe("The Temporal task queue of the site's satellite"),
    satellite: SatelliteView,
    created_at: timestamp,
    provenance: Provenance,
  })
  .meta({ id: 'Site' });
/** Sites come in one page, with the freshness of the NetBox mirror. */
export const SitePage = z
  .object({ items: z.array(SiteView), next_cursor: z.null(), sync: SyncView.nullable() })
  .meta({ id: 'SitePage' });

export const RackView = z
  .object({
    id: uuid,
    site_id: z.string(),
    name: z.string(),
    rack_type: z.string().nullable(),
    status: z.string().nullable(),
    u_height: z.number().int(),
    serial: z.string().nullable(),
    /** In lists only. */
    device_count: z.number().int().optional(),
    device_summary: RackDeviceSummaryView,
    provenance: Provenance,
  })
  .meta({ id: 'Rack' });
export const RackPage = pageOf(RackView, 'RackPage');
export const RackDetailView = RackView.extend({
  elevation: z.array(
    z.object({
      device_id: uuid,
      name: z.string(),
      position: z.number().nullable(),
      face: z.string().nullable(),
      u_height: z.number().nullable(),
      role: z.string().nullable(),
      node_type: z.string().nullable(),
      power_state: z.string(),
    }),
  ),
}).meta({ id: 'RackDetail' });

export const DeviceView = z
  .object({
    id: uuid,
    name: z.string(),
    site_id: z.string(),
    rack_id: uuid.nullable(),
    position: z.number().nullable(),
    face: z.string().nullable(),
    u_height: z.number().nullable(),
    role: z.string().nullable(),
    vendor: z.string().nullable(),
    model: z.string().nullable(),
    platform: z.string().nullable(),
    serial: z.string().nullable(),
    node_type: z.string().nullable(),
    lifecycle_state: z.string().describe("NetBox's status of the device (the inventory axis), as mirrored"),
    lifecycle: LifecycleView,
    conditions: z.array(ConditionView),
    management_profile: z.string().nullable(),
    bmc_url: z.string().nullable(),
    credential_ref: z.string().nullable(),
    nvos_url: z.string().nullable(),
    nvos_ssh: z.string().nullable(),
    nvos_credential_ref: z.string().nullable(),
    nvos_host_key: z.string().nullable(),
    firmware_version: z.string().nullable(),
    power_state: z.string(),
    power_state_at: nullableTimestamp,
    deleted_at: nullableTimestamp,
    created_at: timestamp,
    updated_at: timestamp,
    provenance: Provenance,
  })
  .meta({ id: 'Device' });
export const DevicePage = pageOf(DeviceView, 'DevicePage');

export const IssueView = z
  .object({
    id: z.number().int(),
    object_type: z.string(),
    netbox_id: z.number().int(),
    device_id: uuid.nullable(),
    code: z.string(),
    message: z.string(),
    first_seen_at: timestamp,
    last_seen_at: timestamp,
    resolved_at: nullableTimestamp,
  })
  .meta({ id: 'InventoryIssue' });
export const IssuePage = pageOf(IssueView, 'InventoryIssuePage');

export const DeviceDetailView = DeviceView.extend({
  interfaces: z.array(
    z.object({
      id: uuid,
      name: z.string(),
      type: z.string().nullable(),
      mac_address: z.string().nullable(),
      mgmt_only: z.boolean(),
      enabled: z.boolean(),
      addresses: z.array(z.string()),
    }),
  ),
  addresses: z.array(
    z.object({
      id: uuid,
      address: z.string(),
      status: z.string().nullable(),
      dns_name: z.string().nullable(),
      interface_id: uuid.nullable(),
    }),
  ),
  inventory_issues: z.array(IssueView),
  firmware: z.array(
    z.object({ component_id: z.string(), version: z.string(), observed_at: timestamp, job_id: uuid.nullable() }),
  ),
}).meta({ id: 'DeviceDetail' });

/** What a job's workflow publishes (its JSON columns): the known fields, open to more. */
const JobProgress = z.looseObject({
  stage: z.string(),
  percent: z.number().optional(),
  message: z.string().optional(),
  decision: z
    .object({
      stage: z.string(),
      devices: z.record(z.string(), z.string()).describe('Device id → why the stage failed for it'),
      since: timestamp,
      actions: z
        .array(z.enum(decisionActions))
        .optional()
        .describe('The actions this wait takes; retry, skip and reject when absent'),
    })
    .optional()
    .describe('A failed stage (or a remediation past the blast radius) waiting for POST /v1/jobs/{id}/decision'),
});
const StageTimeline = z.looseObject({
  currentStage: z.string().nullable(),
  stages: z.array(
    z.looseObject({
      name: z.string(),
      status: z.enum(['queued', 'running', 'completed', 'failed', 'skipped', 'cancelled']),
      message: z.string().optional(),
      startedAt: z.string().optional(),
      finishedAt: z.string().optional(),
      durationS: z.number().optional(),
    }),
  ),
});
export const JobErrorView = z.looseObject({ code: z.string(), message: z.string(), details: z.unknown().optional() });
const jsonObject = z.record(z.string(), z.unknown());

export const JobView = z
  .object({
    id: uuid,
    kind: JobKind,
    state: JobState,
    target: z.object({ device_id: uuid.nullable(), rack_id: uuid.nullable(), site_id: z.string().nullable() }),
    params: jsonObject,
    parent_id: uuid.nullable(),
    workflow_id: z.string().nullable(),
    created_by: z.string(),
    created_at: timestamp,
    started_at: nullableTimestamp,
    finished_at: nullableTimestamp,
    progress: JobProgress.nullable(),
    timeline: StageTimeline.nullable(),
    result: jsonObject.nullable(),
    error: JobErrorView.nullable(),
    /** Parents: their children by state. */
    children: z.object({ total: z.number().int(), by_state: z.partialRecord(JobState, z.number().int()) }).optional(),
    links: z.object({ self: z.string(), temporal_ui: z.string().nullable() }),
  })
  .meta({ id: 'Job' });
export const JobPage = pageOf(JobView, 'JobPage');

/** The answer of a request that starts (or acts on) a job: 202 with the job, and Location: /v1/jobs/{id}. */
export const AuditEntryView = z
  .object({
    id: z.number().int(),
    at: timestamp,
    actor: z.string(),
    role: z.string().nullable(),
    action: z.string(),
    /** What it acted on: `device/<id>`, `job/<id>`, `site/<id>`...; a refused request's URL. */
    target: z.string().nullable(),
    request_id: z.string(),
    outcome: z.enum(['accepted', 'rejected']),
    status_code: z.number().int(),
    job_id: uuid.nullable(),
    details: z.record(z.string(), z.unknown()).nullable(),
    /** The hash chain (docs/security.md, "Audit log"): the row before's hash, and this row's. */
    prev_hash: z.string(),
    hash: z.string(),
  })
  .meta({ id: 'AuditEntry' });
export const AuditPage = pageOf(AuditEntryView, 'AuditPage');

export function auditView(a: AuditRow): z.infer<typeof AuditEntryView> {
  return {
    id: a.id,
    at: a.at.toISOString(),
    actor: a.actor,
    role: a.role,
    action: a.action,
    target: a.target,
    request_id: a.requestId,
    outcome: a.outcome as 'accepted' | 'rejected',
    status_code: a.statusCode,
    job_id: a.jobId,
    details: a.details,
    prev_hash: a.prevHash,
    hash: a.hash,
  };
}

/** The caller of GET /v1/whoami: its token's name and role. */
export const WhoamiView = z
  .object({
    name: z.string(),
    role: Role,
    sites: z.array(z.string()).nullable().describe('The sites the token is limited to; null: every site'),
  })
  .meta({ id: 'Whoami' });

export const jobAccepted = (description: string): Reply => ({
  status: 202,
  description,
  body: JobView,
  headers: ['Location'],
});

export interface ViewContext {
  temporalUiUrl?: string | undefined;
  temporalNamespace: string;
}

/** Where a record came from and how fresh the mirror is. */
function provenance(
  row: { netboxId: number | null; netboxLastUpdated: Date | null; lastSyncedAt: Date | null },
  path: string,
  sync: SyncState | undefined,
) {
  if (row.netboxId === null) return { source: 'api' as const };
  return {
    source: 'netbox' as const,
    netbox_id: row.netboxId,
    netbox_url: sync?.sourceUrl ? `${sync.sourceUrl.replace(/\/$/, '')}/${path}/${row.netboxId}/` : null,
    netbox_last_updated: iso(row.netboxLastUpdated),
    last_synced_at: iso(row.lastSyncedAt),
    stale: sync?.stale ?? true,
  };
}

export function syncView(sync: SyncState | undefined): z.infer<typeof SyncView> | null {
  if (!sync) return null;
  return {
    source: 'netbox' as const,
    url: sync.sourceUrl,
    stale: sync.stale,
    last_success_at: iso(sync.lastSuccessAt),
    last_full_sync_at: iso(sync.lastFullSyncAt),
    last_attempt_at: iso(sync.lastAttemptAt),
    last_error: sync.lastError,
  };
}

/** A site with its satellite as the workflow agent last checked it (undefined: never). */
export function siteView(s: Site, satellite: SiteSatellite | undefined, sync?: SyncState): z.infer<typeof SiteView> {
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    state: siteState(s),
    draining_since: s.drainingSince?.toISOString() ?? null,
    removed_at: s.removedAt?.toISOString() ?? null,
    task_queue: siteTaskQueue(s.id),
    satellite: {
      status: satelliteState(satellite, new Date()),
      pollers: satellite?.pollers ?? 0,
      last_seen_at: satellite?.lastSeenAt?.toISOString() ?? null,
    },
    created_at: s.createdAt.toISOString(),
    provenance: provenance(s, 'dcim/sites', sync),
  };
}

export function rackView(
  r: Rack & { deviceCount?: number },
  summary: RackDeviceSummary,
  sync?: SyncState,
): z.infer<typeof RackView> {
  return {
    id: r.id,
    site_id: r.siteId,
    name: r.name,
    rack_type: r.rackType,
    status: r.status,
    u_height: r.uHeight,
    serial: r.serial,
    ...(r.deviceCount === undefined ? {} : { device_count: r.deviceCount }),
    device_summary: rackDeviceSummaryView(summary),
    provenance: provenance(r, 'dcim/racks', sync),
  };
}

/** A rack with its elevation: each device's position, face and height, top first. */
export function rackDetailView(
  r: Rack,
  devices: Device[],
  summary: RackDeviceSummary,
  sync?: SyncState,
): z.infer<typeof RackDetailView> {
  return {
    ...rackView(r, summary, sync),
    elevation: devices.map((d) => ({
      device_id: d.id,
      name: d.name,
      position: d.position,
      face: d.face,
      u_height: d.uHeight,
      role: d.role,
      node_type: d.nodeType,
      power_state: d.powerState,
    })),
  };
}

/** A device; listDevicesJson (@fleet/db) writes the same JSON in SQL for lists, field for field and in this order. */
export function deviceView(d: Device, status: DeviceStatus, sync?: SyncState): z.infer<typeof DeviceView> {
  return {
    id: d.id,
    name: d.name,
    site_id: d.siteId,
    rack_id: d.rackId,
    position: d.position,
    face: d.face,
    u_height: d.uHeight,
    role: d.role,
    vendor: d.vendor,
    model: d.model,
    platform: d.platform,
    serial: d.serial,
    node_type: d.nodeType,
    lifecycle_state: d.lifecycleState,
    lifecycle: lifecycleView(d, status),
    conditions: status.conditions.map(conditionView),
    management_profile: d.managementProfile,
    bmc_url: d.bmcUrl,
    credential_ref: d.credentialRef,
    nvos_url: d.nvosUrl,
    nvos_ssh: d.nvosSsh,
    nvos_credential_ref: d.nvosCredentialRef,
    nvos_host_key: d.nvosHostKey,
    firmware_version: d.firmwareVersion,
    power_state: d.powerState,
    power_state_at: iso(d.powerStateAt),
    deleted_at: iso(d.deletedAt),
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    provenance: provenance(d, 'dcim/devices', sync),
  };
}

export function issueView(i: InventoryIssue): z.infer<typeof IssueView> {
  return {
    id: i.id,
    object_type: i.objectType,
    netbox_id: i.netboxId,
    device_id: i.deviceId,
    code: i.code,
    message: i.message,
    first_seen_at: i.firstSeenAt.toISOString(),
    last_seen_at: i.lastSeenAt.toISOString(),
    resolved_at: iso(i.resolvedAt),
  };
}

export function deviceDetailView(
  d: Device,
  status: DeviceStatus,
  net: { interfaces: Interface[]; addresses: IpAddress[] },
  issues: InventoryIssue[],
  sync?: SyncState,
  firmware: DeviceFirmware[] = [],
): z.infer<typeof DeviceDetailView> {
  return {
    ...deviceView(d, status, sync),
    interfaces: net.interfaces.map((i) => ({
      id: i.id,
      name: i.name,
      type: i.type,
      mac_address: i.macAddress,
      mgmt_only: i.mgmtOnly,
      enabled: i.enabled,
      addresses: net.addresses.filter((a) => a.interfaceId === i.id).map((a) => a.address),
    })),
    addresses: net.addresses.map((a) => ({
      id: a.id,
      address: a.address,
      status: a.status,
      dns_name: a.dnsName,
      interface_id: a.interfaceId,
    })),
    inventory_issues: issues.map(issueView),
    // Installed versions per component, as the last job that read them verified them.
    firmware: firmware.map((f) => ({
      component_id: f.componentId,
      version: f.version,
      observed_at: f.observedAt.toISOString(),
      job_id: f.jobId,
    })),
  };
}

/**
 * A job as the API shows it. `workflow_id` and `links.temporal_ui` name the workflow that runs
 * the job: a rack sequence's child runs in its parent's workflow, a batch parent has none (null).
 * `parentKind` is the kind of the job's parent, for children.
 */
export function jobView(
  j: Job,
  ctx: ViewContext,
  children?: Partial<Record<JobState, number>>,
  parentKind?: string,
): z.infer<typeof JobView> {
  const workflowId = workflowIdOf(j, parentKind);
  return {
    id: j.id,
    // Written only from the job-kind registry and the job states.
    kind: j.kind as JobKind,
    state: j.state as JobState,
    target: { device_id: j.deviceId, rack_id: j.rackId, site_id: j.siteId },
    params: j.params,
    parent_id: j.parentId,
    workflow_id: workflowId,
    created_by: j.createdBy,
    created_at: j.createdAt.toISOString(),
    started_at: iso(j.startedAt),
    finished_at: iso(j.finishedAt),
    // JSON the job's workflow published: the domain's fields, and whatever else it added (loose schemas).
    progress: (j.progress ?? null) as z.infer<typeof JobProgress> | null,
    timeline: (j.timeline ?? null) as z.infer<typeof StageTimeline> | null,
    result: j.result ?? null,
    error: (j.error ?? null) as z.infer<typeof JobErrorView> | null,
    ...(children
      ? { children: { total: Object.values(children).reduce((a: number, b) => a + (b ?? 0), 0), by_state: children } }
      : {}),
    links: {
      self: `/v1/jobs/${j.id}`,
      temporal_ui:
        ctx.temporalUiUrl && workflowId
          ? `${ctx.temporalUiUrl.replace(/\/$/, '')}/namespaces/${ctx.temporalNamespace}/workflows/${workflowId}`
          : null,
    },
  };
}

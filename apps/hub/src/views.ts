import type {
  Device,
  DeviceFirmware,
  Interface,
  InventoryIssue,
  IpAddress,
  Job,
  Rack,
  Site,
  SyncState,
} from '@fleet/db';
import { workflowIdOf } from './services/parent-jobs.service.js';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

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

export function syncView(sync: SyncState | undefined) {
  if (!sync) return null;
  return {
    source: 'netbox',
    url: sync.sourceUrl,
    stale: sync.stale,
    last_success_at: iso(sync.lastSuccessAt),
    last_full_sync_at: iso(sync.lastFullSyncAt),
    last_attempt_at: iso(sync.lastAttemptAt),
    last_error: sync.lastError,
  };
}

export function siteView(s: Site, sync?: SyncState) {
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    created_at: iso(s.createdAt),
    provenance: provenance(s, 'dcim/sites', sync),
  };
}

export function rackView(r: Rack & { deviceCount?: number }, sync?: SyncState) {
  return {
    id: r.id,
    site_id: r.siteId,
    name: r.name,
    rack_type: r.rackType,
    status: r.status,
    u_height: r.uHeight,
    serial: r.serial,
    ...(r.deviceCount === undefined ? {} : { device_count: r.deviceCount }),
    provenance: provenance(r, 'dcim/racks', sync),
  };
}

export function deviceView(d: Device, sync?: SyncState) {
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
    created_at: iso(d.createdAt),
    updated_at: iso(d.updatedAt),
    provenance: provenance(d, 'dcim/devices', sync),
  };
}

export function issueView(i: InventoryIssue) {
  return {
    id: i.id,
    object_type: i.objectType,
    netbox_id: i.netboxId,
    device_id: i.deviceId,
    code: i.code,
    message: i.message,
    first_seen_at: iso(i.firstSeenAt),
    last_seen_at: iso(i.lastSeenAt),
    resolved_at: iso(i.resolvedAt),
  };
}

export function deviceDetailView(
  d: Device,
  net: { interfaces: Interface[]; addresses: IpAddress[] },
  issues: InventoryIssue[],
  sync?: SyncState,
  firmware: DeviceFirmware[] = [],
) {
  return {
    ...deviceView(d, sync),
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
      observed_at: iso(f.observedAt),
      job_id: f.jobId,
    })),
  };
}

/**
 * A job as the API shows it. `workflow_id` and `links.temporal_ui` name the workflow that runs
 * the job: a rack sequence's child runs in its parent's workflow, a batch parent has none (null).
 * `parentKind` is the kind of the job's parent, for children.
 */
export function jobView(j: Job, ctx: ViewContext, children?: Partial<Record<string, number>>, parentKind?: string) {
  const workflowId = workflowIdOf(j, parentKind);
  return {
    id: j.id,
    kind: j.kind,
    state: j.state,
    target: { device_id: j.deviceId, rack_id: j.rackId, site_id: j.siteId },
    params: j.params,
    parent_id: j.parentId,
    workflow_id: workflowId,
    created_by: j.createdBy,
    created_at: iso(j.createdAt),
    started_at: iso(j.startedAt),
    finished_at: iso(j.finishedAt),
    progress: j.progress ?? null,
    timeline: j.timeline ?? null,
    result: j.result ?? null,
    error: j.error ?? null,
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

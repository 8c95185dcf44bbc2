import type { Device, Job, Site } from '@fleet/db';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export interface ViewContext {
  temporalUiUrl?: string | undefined;
  temporalNamespace: string;
}

export function siteView(s: Site) {
  return { id: s.id, name: s.name, created_at: iso(s.createdAt) };
}

export function deviceView(d: Device) {
  return {
    id: d.id,
    name: d.name,
    site_id: d.siteId,
    node_type: d.nodeType,
    bmc_url: d.bmcUrl,
    credential_ref: d.credentialRef,
    power_state: d.powerState,
    power_state_at: iso(d.powerStateAt),
    created_at: iso(d.createdAt),
    updated_at: iso(d.updatedAt),
  };
}

export function jobView(j: Job, ctx: ViewContext) {
  return {
    id: j.id,
    kind: j.kind,
    state: j.state,
    target: { device_id: j.deviceId, site_id: j.siteId },
    params: j.params,
    parent_id: j.parentId,
    created_by: j.createdBy,
    created_at: iso(j.createdAt),
    started_at: iso(j.startedAt),
    finished_at: iso(j.finishedAt),
    progress: j.progress ?? null,
    result: j.result ?? null,
    error: j.error ?? null,
    links: {
      self: `/v1/jobs/${j.id}`,
      temporal_ui: ctx.temporalUiUrl ? `${ctx.temporalUiUrl.replace(/\/$/, '')}/namespaces/${ctx.temporalNamespace}/workflows/${j.id}` : null,
    },
  };
}

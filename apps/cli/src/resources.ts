import type {
  Campaign,
  components,
  Device,
  FirmwareManifest,
  FirmwarePackage,
  InventoryIssue,
  Job,
  Rack,
  Site,
} from '@fleet/client';
import { pendingDecision } from './jobs/decision.js';
import { childrenText } from './jobs/progress.js';
import { age, type Column } from './output/format.js';

/** A list filter of the hub's API as a `get` option: `--site dev-01` becomes `site_id=dev-01`. */
export interface Filter {
  flag: string;
  param: string;
  description: string;
  /** A flag without a value that sends `param=true`. */
  boolean?: boolean;
  /** The hub takes one value, not a list. */
  single?: boolean;
}

/** A kind of object `fleetctl get` lists and shows. */
export interface Resource<T = unknown> {
  /** The plural first (`get devices`); the others are aliases (`get device ID`). */
  names: [string, ...string[]];
  list: string;
  /** False for lists the hub answers whole, without `limit` and `next_cursor` paging (sites, racks). */
  paged?: false;
  /** The route of one item (`{id}` replaced), when the hub has one. */
  item?: string;
  filters: Filter[];
  columns: Column<T>[];
  /** The SSE event type that announces a change to this kind (for --watch). */
  event?: string;
  example: string;
}

const shortId = (id: string | null | undefined) => id ?? '-';

const sites: Resource<Site> = {
  names: ['sites', 'site'],
  list: '/v1/sites',
  paged: false,
  item: '/v1/sites/{id}',
  filters: [],
  columns: [
    { header: 'ID', value: (s) => s.id },
    { header: 'NAME', value: (s) => s.name },
    { header: 'STATUS', value: (s) => s.status },
    { header: 'STATE', value: (s) => s.state },
    { header: 'SATELLITE', value: (s) => s.satellite.status },
    { header: 'SOURCE', value: (s) => s.provenance.source },
    { header: 'AGE', value: (s) => age(s.created_at), wide: true },
  ],
  example: 'fleetctl get sites -o yaml',
};

const racks: Resource<Rack> = {
  names: ['racks', 'rack'],
  list: '/v1/racks',
  paged: false,
  item: '/v1/racks/{id}',
  filters: [{ flag: 'site', param: 'site_id', description: 'racks of this site (repeat for several)' }],
  columns: [
    { header: 'ID', value: (r) => r.id },
    { header: 'NAME', value: (r) => r.name },
    { header: 'SITE', value: (r) => r.site_id },
    { header: 'TYPE', value: (r) => r.rack_type },
    { header: 'DEVICES', value: (r) => r.device_count },
    { header: 'STATUS', value: (r) => r.status },
    { header: 'SERIAL', value: (r) => r.serial, wide: true },
    { header: 'U', value: (r) => r.u_height, wide: true },
  ],
  example: 'fleetctl get racks --site dev-01',
};

const devices: Resource<Device> = {
  names: ['devices', 'device', 'dev'],
  list: '/v1/devices',
  item: '/v1/devices/{id}',
  event: 'device',
  filters: [
    { flag: 'site', param: 'site_id', description: 'site ID' },
    { flag: 'rack', param: 'rack_id', description: 'rack ID' },
    { flag: 'role', param: 'role', description: 'NetBox role slug (compute-tray, nvlink-switch-tray, power-shelf)' },
    { flag: 'vendor', param: 'vendor', description: 'vendor' },
    { flag: 'model', param: 'model', description: 'model' },
    { flag: 'node-type', param: 'node_type', description: 'node type (compute_gb200_nvidia ...)' },
    { flag: 'lifecycle-state', param: 'lifecycle_state', description: 'lifecycle state (active, offline ...)' },
    { flag: 'power-state', param: 'power_state', description: 'power state (On, Off, Unknown)' },
    { flag: 'firmware-version', param: 'firmware_version', description: 'reported firmware version' },
    { flag: 'sort', param: 'sort', description: 'name, -name, created_at or -created_at', single: true },
  ],
  columns: [
    { header: 'ID', value: (d) => d.id },
    { header: 'NAME', value: (d) => d.name },
    { header: 'SITE', value: (d) => d.site_id },
    { header: 'ROLE', value: (d) => d.role },
    { header: 'NODE TYPE', value: (d) => d.node_type },
    { header: 'POWER', value: (d) => d.power_state },
    { header: 'FIRMWARE', value: (d) => d.firmware_version },
    { header: 'RACK', value: (d) => shortId(d.rack_id), wide: true },
    { header: 'U', value: (d) => d.position, wide: true },
    { header: 'LIFECYCLE', value: (d) => d.lifecycle_state, wide: true },
    { header: 'SERIAL', value: (d) => d.serial, wide: true },
    { header: 'BMC', value: (d) => d.bmc_url, wide: true },
  ],
  example: 'fleetctl get devices --site dev-01 --role compute-tray --power-state Off -o wide',
};

/** What a job acts on, as one cell. */
export function jobTarget(j: Job): string {
  const t = j.target;
  return t.device_id
    ? `device/${t.device_id}`
    : t.rack_id
      ? `rack/${t.rack_id}`
      : t.site_id
        ? `site/${t.site_id}`
        : '-';
}

/** The job's current stage (or the stage that waits for a decision) and its children, as one cell. */
export function jobProgress(j: Job): string {
  const children = childrenText(j);
  const decision = pendingDecision(j);
  const stage = decision ? `${decision.stage} awaits decision` : (j.timeline?.currentStage ?? j.progress?.stage);
  return [stage, children].filter(Boolean).join(' ') || '-';
}

const jobs: Resource<Job> = {
  names: ['jobs', 'job'],
  list: '/v1/jobs',
  item: '/v1/jobs/{id}',
  event: 'job',
  filters: [
    { flag: 'state', param: 'state', description: 'queued, running, succeeded, failed, cancelling, cancelled' },
    { flag: 'kind', param: 'kind', description: 'job kind (device.power, rack.cold_reboot ...)' },
    { flag: 'device', param: 'device_id', description: 'every job on this device' },
    { flag: 'site', param: 'site_id', description: 'site ID' },
    { flag: 'rack', param: 'rack_id', description: 'jobs recorded against this rack (its sequences and batches)' },
    { flag: 'parent', param: 'parent_id', description: "a rack sequence's, batch's or campaign's children" },
  ],
  columns: [
    { header: 'ID', value: (j) => j.id },
    { header: 'KIND', value: (j) => j.kind },
    { header: 'STATE', value: (j) => j.state },
    { header: 'TARGET', value: jobTarget },
    { header: 'PROGRESS', value: jobProgress },
    { header: 'AGE', value: (j) => age(j.created_at) },
    { header: 'BY', value: (j) => j.created_by, wide: true },
    { header: 'PARENT', value: (j) => j.parent_id, wide: true },
    { header: 'ERROR', value: (j) => j.error?.message, wide: true },
  ],
  example: 'fleetctl get jobs --state running --watch',
};

const campaigns: Resource<Campaign> = {
  names: ['campaigns', 'campaign'],
  list: '/v1/firmware-campaigns',
  item: '/v1/firmware-campaigns/{id}',
  event: 'campaign',
  filters: [
    { flag: 'site', param: 'site_id', description: 'site ID' },
    { flag: 'state', param: 'state', description: "the campaign job's state" },
  ],
  columns: [
    { header: 'ID', value: (c) => c.id },
    { header: 'NAME', value: (c) => c.name },
    { header: 'SITE', value: (c) => c.site_id },
    { header: 'STATE', value: (c) => c.job.state },
    { header: 'STAGE', value: (c) => c.job.progress?.stage },
    { header: 'DEVICES', value: (c) => childrenText(c.job) ?? c.plan.devices },
    { header: 'AGE', value: (c) => age(c.created_at) },
    { header: 'BY', value: (c) => c.created_by, wide: true },
    { header: 'MESSAGE', value: (c) => c.job.progress?.message ?? c.job.error?.message, wide: true },
  ],
  example: 'fleetctl get campaigns --site dev-01 --state running',
};

const packages: Resource<FirmwarePackage> = {
  names: ['packages', 'package', 'pkg'],
  list: '/v1/firmware/packages',
  item: '/v1/firmware/packages/{id}',
  filters: [
    { flag: 'digest', param: 'digest', description: 'sha256 digest' },
    { flag: 'file-name', param: 'file_name', description: 'file name' },
    { flag: 'package-version', param: 'package_version', description: 'package version' },
  ],
  columns: [
    { header: 'ID', value: (p) => p.id },
    { header: 'FILE', value: (p) => p.file_name },
    { header: 'FORMAT', value: (p) => p.format },
    { header: 'VERSION', value: (p) => p.package_version },
    { header: 'SIZE', value: (p) => bytes(p.size_bytes) },
    { header: 'AGE', value: (p) => age(p.created_at) },
    { header: 'DIGEST', value: (p) => p.digest, wide: true },
    { header: 'BY', value: (p) => p.uploaded_by, wide: true },
  ],
  example: 'fleetctl get packages --file-name gb200-bmc-25.10.fwpkg',
};

const manifests: Resource<FirmwareManifest> = {
  names: ['manifests', 'manifest'],
  list: '/v1/firmware/manifests',
  item: '/v1/firmware/manifests/{id}',
  filters: [
    { flag: 'hardware-type', param: 'hardware_type', description: 'node type the manifest is for' },
    { flag: 'default', param: 'default', description: 'only default manifests', boolean: true },
  ],
  columns: [
    { header: 'ID', value: (m) => m.id },
    { header: 'NAME', value: (m) => m.name },
    { header: 'HARDWARE TYPE', value: (m) => m.hardware_type },
    { header: 'DEFAULT', value: (m) => (m.default ? 'yes' : 'no') },
    { header: 'REVISION', value: (m) => m.revision },
    { header: 'STEPS', value: (m) => m.steps.length },
    {
      header: 'COMPONENTS',
      value: (m) => m.steps.flatMap((s) => s.components.map((c) => `${c.id}=${c.version}`)),
      wide: true,
    },
  ],
  example: 'fleetctl get manifests --hardware-type compute_gb200_nvidia --default',
};

const issues: Resource<InventoryIssue> = {
  names: ['issues', 'issue'],
  list: '/v1/inventory-issues',
  filters: [
    { flag: 'device', param: 'device_id', description: 'issues of this device' },
    { flag: 'code', param: 'code', description: 'issue code (missing_bmc_address ...)' },
    { flag: 'include-resolved', param: 'include_resolved', description: 'resolved issues too', boolean: true },
  ],
  columns: [
    { header: 'ID', value: (i) => i.id },
    { header: 'CODE', value: (i) => i.code },
    { header: 'OBJECT', value: (i) => `${i.object_type}/${i.netbox_id}` },
    { header: 'DEVICE', value: (i) => i.device_id },
    { header: 'MESSAGE', value: (i) => i.message },
    { header: 'AGE', value: (i) => age(i.first_seen_at) },
    { header: 'RESOLVED', value: (i) => i.resolved_at, wide: true },
  ],
  example: 'fleetctl get issues --code missing_bmc_address -o json',
};

type Schemas = components['schemas'];
export type RmaCase = Schemas['RmaCase'];
export type SlaBreach = Schemas['SlaBreach'];
export type FacilityEvent = Schemas['FacilityEvent'];

export const rmaCases: Resource<RmaCase> = {
  names: ['rma'],
  list: '/v1/rma',
  item: '/v1/rma/{id}',
  event: 'rma',
  filters: [
    { flag: 'state', param: 'state', description: 'open, shipped, replaced, revalidating, closed' },
    { flag: 'site', param: 'site_id', description: 'site ID' },
    { flag: 'device', param: 'device_id', description: "a device's cases (its RMA history)" },
  ],
  columns: [
    { header: 'ID', value: (c) => c.id },
    { header: 'DEVICE', value: (c) => c.device_id },
    { header: 'STATE', value: (c) => c.state },
    { header: 'PART', value: (c) => c.failed_part },
    { header: 'VENDOR CASE', value: (c) => c.vendor_case_id },
    { header: 'AGE', value: (c) => age(c.created_at) },
    { header: 'SITE', value: (c) => c.site_id, wide: true },
    { header: 'FAULT', value: (c) => c.fault_class, wide: true },
    { header: 'OPENED BY', value: (c) => c.opened_by, wide: true },
    { header: 'MOVES', value: (c) => c.operator_moves, wide: true },
    { header: 'REASON', value: (c) => c.reason, wide: true },
  ],
  example: 'fleetctl rma list --state open --site dev-01',
};

export const slaBreaches: Resource<SlaBreach> = {
  names: ['sla-breaches', 'sla-breach'],
  list: '/v1/sla-breaches',
  item: '/v1/sla-breaches/{id}',
  event: 'sla_breach',
  filters: [
    { flag: 'status', param: 'status', description: 'open or resolved (both when absent)', single: true },
    { flag: 'object-type', param: 'object_type', description: 'device, job or campaign' },
    { flag: 'object', param: 'object_id', description: "a device's, job's or campaign's breaches (its ID)" },
    { flag: 'site', param: 'site_id', description: 'site ID' },
    { flag: 'key', param: 'sla_key', description: 'SLA key (lifecycle:quarantined, job_running:device.power ...)' },
  ],
  columns: [
    { header: 'ID', value: (b) => b.id },
    { header: 'OBJECT', value: (b) => `${b.object_type}/${b.object_name ?? b.object_id}` },
    { header: 'KEY', value: (b) => b.sla_key },
    { header: 'LIMIT', value: (b) => `${b.limit_s}s` },
    { header: 'OVERDUE', value: (b) => `${b.overdue_s}s` },
    { header: 'STATUS', value: (b) => (b.resolved_at ? `resolved (${b.resolution})` : 'open') },
    { header: 'AGE', value: (b) => age(b.breached_at) },
    { header: 'OBJECT ID', value: (b) => b.object_id, wide: true },
    { header: 'SITE', value: (b) => b.site_id, wide: true },
    { header: 'SINCE', value: (b) => b.since, wide: true },
    {
      header: 'DELIVERIES',
      value: (b) => b.deliveries.map((d) => `${d.webhook}:${d.event}:${d.status}`),
      wide: true,
    },
  ],
  example: 'fleetctl sla breaches --status open --site dev-01',
};

export const facilityEvents: Resource<FacilityEvent> = {
  names: ['facility-events', 'facility-event'],
  list: '/v1/facility-events',
  item: '/v1/facility-events/{id}',
  event: 'facility_event',
  filters: [
    {
      flag: 'state',
      param: 'state',
      description: 'recorded, quarantined, awaiting_approval, powering_off, done, failed, rejected',
    },
    { flag: 'kind', param: 'kind', description: 'leak, power_feed, cooling, smoke, other' },
    { flag: 'severity', param: 'severity', description: 'info, warning, critical' },
    { flag: 'rack', param: 'rack_id', description: 'events naming this rack (its ID)' },
    { flag: 'source', param: 'source', description: 'the token that posted them (bms-hall-1 ...)' },
  ],
  columns: [
    { header: 'ID', value: (e) => e.id },
    { header: 'KIND', value: (e) => e.kind },
    { header: 'SEVERITY', value: (e) => `${e.severity}${e.critical ? ' (critical)' : ''}` },
    { header: 'STATE', value: (e) => e.state },
    { header: 'RESPONSE', value: (e) => e.grading.response },
    { header: 'RACKS', value: (e) => e.rack_ids.length },
    { header: 'SOURCE', value: (e) => e.source },
    { header: 'AGE', value: (e) => age(e.received_at) },
    { header: 'EXTERNAL ID', value: (e) => e.external_id, wide: true },
    { header: 'LOCATION', value: (e) => e.location, wide: true },
    { header: 'MESSAGE', value: (e) => e.message, wide: true },
    { header: 'JOBS', value: (e) => e.job_ids.length, wide: true },
  ],
  example: 'fleetctl facility events --state awaiting_approval',
};

export const resources = [
  sites,
  racks,
  devices,
  jobs,
  campaigns,
  packages,
  manifests,
  issues,
  rmaCases,
  slaBreaches,
  facilityEvents,
] as Resource[];

/** 1.5 GiB, 20 MiB, 512 B. */
export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

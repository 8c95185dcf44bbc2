import {
  unwrap,
  type Campaign,
  type CampaignDevice,
  type components,
  type DeviceDetail,
  type Job,
  type RackDetail,
} from '@fleet/client';
import type { Command } from 'commander';
import { deviceId, resolveRack } from '../api/lookup.js';
import { pages, type Query } from '../api/pages.js';
import type { Hub } from '../api/hub.js';
import { UsageError } from '../exit-codes.js';
import { childrenText } from '../jobs/progress.js';
import { age, type OutputFormat } from '../output/format.js';
import { printObject } from '../output/printer.js';
import { fields, StreamingTable } from '../output/table.js';
import { jobProgress, jobTarget } from '../resources.js';
import type { Runtime } from '../runtime.js';
import { storyOf } from './job.js';
import { examples, outputOption } from './options.js';

type DeviceCompliance = components['schemas']['DeviceCompliance'];

export function registerDescribe(program: Command, rt: Runtime): void {
  const cmd = program
    .command('describe <kind> <id>')
    .description('a readable summary of a device, rack, job or campaign (identity, state, firmware, jobs, issues)')
    .option('--site <site>', 'the site of a rack given by name');
  outputOption(cmd);
  examples(
    cmd,
    'fleetctl describe device 5f0c2f1e-…',
    'fleetctl describe rack rack-01 --site dev-01',
    'fleetctl describe campaign 0b6f… -o yaml',
  );
  cmd.action(async (kind: string, id: string, opts: { output: OutputFormat; site?: string }) => {
    const hub = rt.hub();
    switch (kind) {
      case 'device':
        return show(rt, opts.output, await describeDevice(hub, id), deviceText);
      case 'rack':
        return show(rt, opts.output, await describeRack(hub, await resolveRack(hub, id, opts.site)), rackText);
      case 'job':
        return show(rt, opts.output, await describeJob(hub, id), jobText);
      case 'campaign':
        return show(rt, opts.output, await describeCampaign(hub, id), campaignText);
      default:
        throw new UsageError(`describe ${kind}: expected device, rack, job or campaign`);
    }
  });
}

function show<T>(rt: Runtime, output: OutputFormat, value: T, text: (value: T) => string): Promise<void> {
  return printObject(value, output === 'wide' ? 'table' : output, rt.out, text);
}

async function firstPage<T>(hub: Hub, path: string, query: Query, size: number): Promise<T[]> {
  for await (const page of pages<T>(hub, path, query, size)) return page;
  return [];
}

const section = (title: string, body: string) => `\n${title}:\n${body || '  none\n'}`;
const indent = (text: string) => text.replace(/^(?=.)/gm, '  ');

interface DeviceSummary {
  device: DeviceDetail;
  compliance: DeviceCompliance | null;
  recent_jobs: Job[];
}

async function describeDevice(hub: Hub, id: string): Promise<DeviceSummary> {
  const device = await unwrap(hub.api.GET('/v1/devices/{id}', { params: { path: { id: deviceId(id) } } }));
  const [compliance, recentJobs] = await Promise.all([
    complianceOf(hub, device),
    firstPage<Job>(hub, '/v1/jobs', { device_id: [device.id] }, 5),
  ]);
  return { device, compliance, recent_jobs: recentJobs };
}

/** The device's line of the compliance report, found among its rack's (or its site's node type's) devices. */
async function complianceOf(hub: Hub, device: DeviceDetail): Promise<DeviceCompliance | null> {
  if (!device.node_type) return null;
  const query: Query = device.rack_id
    ? { rack_id: [device.rack_id] }
    : { site_id: [device.site_id], hardware_type: [device.node_type] };
  for await (const page of pages<DeviceCompliance>(hub, '/v1/firmware/compliance', query, 500)) {
    const mine = page.find((c) => c.device_id === device.id);
    if (mine) return mine;
  }
  return null;
}

function deviceText({ device: d, compliance, recent_jobs }: DeviceSummary): string {
  let out = fields([
    ['Name', d.name],
    ['ID', d.id],
    ['Site', d.site_id],
    ['Rack', d.rack_id ? `${d.rack_id} (U${d.position ?? '?'})` : null],
    ['Role', d.role],
    ['Node type', d.node_type],
    ['Vendor / model', [d.vendor, d.model].filter(Boolean).join(' ')],
    ['Serial', d.serial],
    ['Lifecycle', d.lifecycle_state],
    ['Power', `${d.power_state}${d.power_state_at ? ` (seen ${age(d.power_state_at)} ago)` : ''}`],
    ['BMC', d.bmc_url],
    ['NVOS', d.nvos_url],
    ['Firmware', d.firmware_version],
    ['Source', d.provenance.source],
  ]);
  const components = compliance?.components ?? [];
  const firmware = new StreamingTable<(typeof components)[number]>([
    { header: 'COMPONENT', value: (c) => c.id },
    { header: 'INSTALLED', value: (c) => c.installed },
    { header: 'DESIRED', value: (c) => c.desired },
    { header: 'OK', value: (c) => (c.compliant ? 'yes' : 'no') },
  ]);
  const status = compliance ? `  status: ${compliance.status}\n` : '  no manifest applies\n';
  out += section('Firmware against desired', status + (components.length ? indent(firmware.render(components)) : ''));
  out += section('Recent jobs', indent(jobsTable(recent_jobs)));
  const issues = d.inventory_issues.map((i) => `  ${i.code}: ${i.message}\n`).join('');
  out += section('Issues', issues);
  return out;
}

function jobsTable(jobs: Job[]): string {
  if (!jobs.length) return '';
  return new StreamingTable<Job>([
    { header: 'ID', value: (j) => j.id },
    { header: 'KIND', value: (j) => j.kind },
    { header: 'STATE', value: (j) => j.state },
    { header: 'PROGRESS', value: jobProgress },
    { header: 'AGE', value: (j) => age(j.created_at) },
    { header: 'ERROR', value: (j) => j.error?.message },
  ]).render(jobs);
}

async function describeRack(hub: Hub, id: string): Promise<RackDetail> {
  return unwrap(hub.api.GET('/v1/racks/{id}', { params: { path: { id } } }));
}

function rackText(r: RackDetail): string {
  const power = new Map<string, number>();
  for (const d of r.elevation) power.set(d.power_state, (power.get(d.power_state) ?? 0) + 1);
  let out = fields([
    ['Name', r.name],
    ['ID', r.id],
    ['Site', r.site_id],
    ['Type', r.rack_type],
    ['Status', r.status],
    ['Serial', r.serial],
    ['Devices', r.elevation.length],
    ['Power', [...power].map(([state, n]) => `${n} ${state}`).join(', ')],
  ]);
  const elevation = new StreamingTable<RackDetail['elevation'][number]>([
    { header: 'U', value: (d) => d.position },
    { header: 'NAME', value: (d) => d.name },
    { header: 'ROLE', value: (d) => d.role },
    { header: 'NODE TYPE', value: (d) => d.node_type },
    { header: 'POWER', value: (d) => d.power_state },
    { header: 'DEVICE', value: (d) => d.device_id },
  ]);
  const sorted = [...r.elevation].sort((a, b) => (b.position ?? 0) - (a.position ?? 0));
  out += section('Elevation', sorted.length ? indent(elevation.render(sorted)) : '');
  return out;
}

interface JobSummary {
  job: Job;
  children: Job[];
}

async function describeJob(hub: Hub, id: string): Promise<JobSummary> {
  const job = await unwrap(hub.api.GET('/v1/jobs/{id}', { params: { path: { id } } }));
  const children = job.children?.total ? await firstPage<Job>(hub, '/v1/jobs', { parent_id: [id] }, 100) : [];
  return { job, children };
}

function jobText({ job, children }: JobSummary): string {
  let out = storyOf(job);
  if (job.links.temporal_ui) out += `  workflow: ${job.links.temporal_ui}\n`;
  if (job.result) out += `  result: ${JSON.stringify(job.result)}\n`;
  if (job.children?.total) {
    const more = job.children.total > children.length ? `  … ${job.children.total - children.length} more\n` : '';
    const rows = children.map((c) => `  ${jobTarget(c)} ${c.state}${c.error ? `: ${c.error.message}` : ''}\n`);
    out += section(`Devices (${childrenText(job)})`, rows.join('') + more);
  }
  return out;
}

interface CampaignSummary {
  campaign: Campaign;
  devices_by_state: Record<string, number>;
}

async function describeCampaign(hub: Hub, id: string): Promise<CampaignSummary> {
  const campaign = await unwrap(hub.api.GET('/v1/firmware-campaigns/{id}', { params: { path: { id } } }));
  const byState: Record<string, number> = {};
  for await (const page of pages<CampaignDevice>(hub, `/v1/firmware-campaigns/${id}/devices`, {}, 1000))
    for (const d of page) byState[d.state] = (byState[d.state] ?? 0) + 1;
  return { campaign, devices_by_state: byState };
}

function campaignText({ campaign: c, devices_by_state }: CampaignSummary): string {
  const p = c.policy;
  let out = fields([
    ['Name', c.name],
    ['ID', c.id],
    ['Site', c.site_id],
    ['Created', `${c.created_at} by ${c.created_by}`],
    ['State', c.job.state],
    [
      'Stage',
      c.job.progress ? `${c.job.progress.stage}${c.job.progress.message ? `: ${c.job.progress.message}` : ''}` : null,
    ],
    [
      'Devices',
      Object.entries(devices_by_state)
        .map(([s, n]) => `${n} ${s}`)
        .join(', ') || c.plan.devices,
    ],
    [
      'Plan',
      `${c.plan.devices} devices in ${c.plan.waves.length} waves, about ${Math.round(c.plan.estimated_duration_s)} s`,
    ],
    [
      'Policy',
      `canary ${p.canarySize}, waves of ${p.waveSize}, failure budget ${p.failureBudget}, ` +
        `at most ${p.maxConcurrentPerSite}/site ${p.maxConcurrentPerRack}/rack ` +
        `${p.maxConcurrentPerPowerDomain}/power domain` +
        `${p.autoApprove ? ', auto-approve' : ''}${p.force ? ', force' : ''}`,
    ],
  ]);
  if (c.job.error) out += `Error:  ${c.job.error.code}: ${c.job.error.message}\n`;
  const failures = (c.failures ?? [])
    .map((f) => `  ${f.name} (${f.device_id}): ${f.error?.message ?? f.status}\n`)
    .join('');
  out += section('Failures', failures);
  return out;
}

import { unwrap, type CampaignPlan, type paths } from '@fleet/client';
import { Option, type Command } from 'commander';
import { awaitsApproval } from '../jobs/follow.js';
import { UsageError } from '../exit-codes.js';
import type { OutputFormat } from '../output/format.js';
import { printObject } from '../output/printer.js';
import { fields, StreamingTable } from '../output/table.js';
import { resources } from '../resources.js';
import type { Runtime } from '../runtime.js';
import { headersOf, mutationOptions, reportJob, waitForJob, type MutationOptions } from './job-result.js';
import { collect, examples, outputOption, positiveInt } from './options.js';

type NewCampaign = paths['/v1/firmware-campaigns']['post']['requestBody']['content']['application/json'];
type Policy = NonNullable<NewCampaign['policy']>;
type NodeType = NonNullable<NewCampaign['node_types']>[number];

interface CreateOptions extends MutationOptions {
  name: string;
  site: string;
  nodeType?: string[];
  device?: string[];
  manifest?: string[];
  dryRun?: boolean;
  canarySize?: number;
  waveSize?: number;
  failureBudget?: number;
  maxPerSite?: number;
  maxPerRack?: number;
  maxPerPowerDomain?: number;
  autoApprove?: boolean;
  force?: boolean;
}

const campaignColumns = resources.find((r) => r.names[0] === 'campaigns')!.columns as never;

export function registerCampaign(program: Command, rt: Runtime): void {
  const campaign = program
    .command('campaign')
    .description('firmware campaigns: plan, canary, approval, waves under caps, failure budget');
  examples(
    campaign,
    'fleetctl campaign create --name gb200-25.10 --site dev-01 --dry-run',
    'fleetctl campaign approve 0b6f…',
  );
  registerCreate(campaign, rt);
  registerWait(campaign, rt);
  for (const [action, what] of [
    ['approve', 'let the waves after the canary start'],
    ['pause', 'finish running devices, start no more'],
    ['resume', 'go on after a pause (or a pause by the failure budget)'],
    ['cancel', 'stop the campaign; running devices finish their step'],
  ] as const) {
    const cmd = campaign.command(`${action} <id>`).description(`${what}`);
    mutationOptions(cmd);
    examples(cmd, `fleetctl campaign ${action} 0b6f…${action === 'approve' ? ' --wait' : ''}`);
    cmd.action(async (id: string, opts: MutationOptions) => {
      const job = await unwrap(
        rt.hub().raw.POST(`/v1/firmware-campaigns/{id}/${action}`, {
          params: { path: { id } },
          ...headersOf(opts),
        }),
      );
      return reportJob(rt, job as never, opts);
    });
  }
}

function registerWait(campaign: Command, rt: Runtime): void {
  const cmd = campaign
    .command('wait <id>')
    .description(
      'follow a campaign live; exit 0 when it succeeds (or, with --for approval, when its canary awaits approval), ' +
        '1 when it fails or is cancelled',
    )
    .addOption(
      new Option('--for <point>', 'what to wait for: the end, or the approval gate after the canary')
        .choices(['end', 'approval'])
        .default('end'),
    );
  outputOption(cmd);
  examples(
    cmd,
    'fleetctl campaign wait 0b6f… --for approval && fleetctl campaign approve 0b6f… --wait',
    'fleetctl campaign wait 0b6f… -o json > campaign.json',
  );
  cmd.action(async (id: string, opts: { for: 'end' | 'approval'; output: OutputFormat }) => {
    await waitForJob(rt, id, opts.output, opts.for === 'approval' ? awaitsApproval : undefined);
  });
}

function registerCreate(campaign: Command, rt: Runtime): void {
  const cmd = campaign
    .command('create')
    .description('start a firmware campaign over a site (its devices, or those of some node types or IDs)')
    .requiredOption('--name <name>', 'campaign name')
    .requiredOption('--site <site>', 'site ID')
    .option('--node-type <type>', 'only devices of this node type (repeatable)', collect)
    .option('--device <id>', 'only these devices (repeatable)', collect)
    .option('--manifest <type=id>', 'the manifest for a node type instead of its default (repeatable)', collect)
    .option('--dry-run', 'print the plan (waves, exclusions, estimated duration); start nothing')
    .option('--canary-size <n>', 'devices in the canary wave before approval', positiveInt)
    .option('--wave-size <n>', 'devices per wave', positiveInt)
    .option('--failure-budget <n>', 'failed devices before the campaign pauses itself', positiveInt)
    .option('--max-per-site <n>', 'concurrent devices per site', positiveInt)
    .option('--max-per-rack <n>', 'concurrent devices per rack', positiveInt)
    .option('--max-per-power-domain <n>', 'concurrent devices per power domain', positiveInt)
    .option('--auto-approve', 'no approval gate after the canary')
    .option('--force', 'push components already at the desired version');
  mutationOptions(cmd);
  examples(
    cmd,
    'fleetctl campaign create --name gb200-25.10 --site dev-01 --node-type compute_gb200_nvidia --dry-run',
    'fleetctl campaign create --name gb200-25.10 --site dev-01 --canary-size 1 --wave-size 18',
  );
  cmd.action(async (opts: CreateOptions) => {
    const body: NewCampaign = { name: opts.name, site_id: opts.site, dry_run: Boolean(opts.dryRun) };
    if (opts.nodeType) body.node_types = opts.nodeType as NodeType[];
    if (opts.device) body.device_ids = opts.device;
    if (opts.manifest) body.manifests = manifestMap(opts.manifest);
    const policy = policyOf(opts);
    if (policy) body.policy = policy as Policy;
    const answer = await unwrap(rt.hub().api.POST('/v1/firmware-campaigns', { body, ...headersOf(opts) }));
    if ('plan' in answer && !('id' in answer)) return printPlan(rt, answer as { plan: CampaignPlan }, opts.output);
    const created = answer as { id: string; job: Parameters<typeof reportJob>[1] };
    if (opts.wait) return reportJob(rt, created.job, opts);
    await printObject(created, opts.output, rt.out, campaignColumns);
    if (opts.output === 'table' || opts.output === 'wide') rt.note(`follow it with: fleetctl job wait ${created.id}`);
  });
}

function manifestMap(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const [type, id] = pair.split('=');
    if (!type || !id) throw new UsageError(`--manifest ${pair}: expected NODE_TYPE=MANIFEST_ID`);
    out[type] = id;
  }
  return out;
}

function policyOf(opts: CreateOptions): Partial<Policy> | undefined {
  const policy: Partial<Policy> = {};
  if (opts.canarySize !== undefined) policy.canarySize = opts.canarySize;
  if (opts.waveSize !== undefined) policy.waveSize = opts.waveSize;
  if (opts.failureBudget !== undefined) policy.failureBudget = opts.failureBudget;
  if (opts.maxPerSite !== undefined) policy.maxConcurrentPerSite = opts.maxPerSite;
  if (opts.maxPerRack !== undefined) policy.maxConcurrentPerRack = opts.maxPerRack;
  if (opts.maxPerPowerDomain !== undefined) policy.maxConcurrentPerPowerDomain = opts.maxPerPowerDomain;
  if (opts.autoApprove) policy.autoApprove = true;
  if (opts.force) policy.force = true;
  return Object.keys(policy).length ? policy : undefined;
}

/** The dry run: totals, the waves, and the devices left out with why. */
async function printPlan(rt: Runtime, answer: { plan: CampaignPlan }, output: OutputFormat): Promise<void> {
  await printObject(answer, output, rt.out, ({ plan }) => {
    const waves = new StreamingTable<CampaignPlan['waves'][number]>([
      { header: 'WAVE', value: (w) => w.index },
      { header: 'KIND', value: (w) => w.kind },
      { header: 'DEVICES', value: (w) => w.device_ids.length },
    ]);
    const excluded = plan.excluded.map((e) => `  ${e.name} (${e.device_id}): ${e.reason}\n`).join('');
    return (
      fields([
        ['Devices', plan.devices.length],
        ['Waves', plan.waves.length],
        ['Estimated', `${Math.round(plan.estimated_duration_s)} s (at least ${Math.round(plan.lower_bound_s)} s)`],
        ['Excluded', plan.excluded.length],
      ]) +
      (plan.waves.length ? '\n' + waves.render(plan.waves) : '') +
      (excluded ? `\nExcluded devices:\n${excluded}` : '') +
      '\nNothing was started (dry run).\n'
    );
  });
}

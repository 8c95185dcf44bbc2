import { unwrap, type paths } from '@fleet/client';
import { Option, type Command } from 'commander';
import { deviceId } from '../api/lookup.js';
import { idempotencyHeaders } from '../api/idempotency.js';
import { UsageError } from '../exit-codes.js';
import type { OutputFormat } from '../output/format.js';
import { printObject } from '../output/printer.js';
import { fields, StreamingTable } from '../output/table.js';
import { rmaCases as rmaResource, type Resource, type RmaCase } from '../resources.js';
import type { Runtime } from '../runtime.js';
import { listOptions, listResource, type GetOptions } from './get.js';
import { headersOf, mutationOptions, reportJob, type MutationOptions } from './job-result.js';
import { examples, outputOption } from './options.js';

const rmaCases = rmaResource as Resource;
const rmaColumns = rmaResource.columns;

type RmaPatch = NonNullable<paths['/v1/rma/{id}']['patch']['requestBody']>['content']['application/json'];
type RmaState = NonNullable<RmaPatch['state']>;
const rmaStates: RmaState[] = ['open', 'shipped', 'replaced', 'revalidating', 'closed'];

interface CreateOptions {
  part: string;
  reason: string;
  vendorCase?: string;
  idempotencyKey?: string;
  output: OutputFormat;
}

interface UpdateOptions extends MutationOptions {
  state?: RmaState;
  reason?: string;
  vendorCase?: string;
  clearVendorCase?: boolean;
}

const nonBlank = (flag: string, value: string) => {
  const trimmed = value.trim();
  if (!trimmed) throw new UsageError(`--${flag} is blank`);
  return trimmed;
};

export function registerRma(program: Command, rt: Runtime): void {
  const rma = program
    .command('rma')
    .description('RMA cases: a failed part to its vendor and back (open → shipped → replaced → revalidating → closed)');
  examples(
    rma,
    'fleetctl rma list --state open',
    'fleetctl rma create 5f0c2f1e-… --part GPU_2 --reason "Xid 79, off the bus"',
    'fleetctl rma update 0b6f… --state shipped --reason "picked up by the vendor" --vendor-case NV-123456 --wait',
  );

  const list = rma.command('list').description('RMA cases, newest first, with the API filters');
  listOptions(list, rmaCases, 'rma list');
  list.action((opts: GetOptions) => listResource(rt, rmaCases, opts));

  const show = rma.command('show <id>').description('one case: its device, part, state, history and swap');
  outputOption(show);
  examples(show, 'fleetctl rma show 0b6f…', 'fleetctl rma show 0b6f… -o yaml');
  show.action(async (id: string, opts: { output: OutputFormat }) => {
    const found = await unwrap(rt.hub().api.GET('/v1/rma/{id}', { params: { path: { id } } }));
    await printObject(found, opts.output === 'wide' ? 'table' : opts.output, rt.out, rmaText);
  });

  const create = rma
    .command('create <device>')
    .description(
      'open a case for a device by hand, with the serials of its last hardware read (one open case a device)',
    )
    .requiredOption('--part <part>', 'the part to send back (GPU_2, PSU_3, tray)')
    .requiredOption('--reason <text>', 'why: kept with the case')
    .option('--vendor-case <id>', "the vendor's case id")
    .option('--idempotency-key <key>', 'retry-safe key: the same key never opens a second case (default: a new one)');
  outputOption(create);
  examples(create, 'fleetctl rma create 5f0c2f1e-… --part GPU_2 --reason "Xid 79" --vendor-case NV-123456');
  create.action(async (ref: string, opts: CreateOptions) => {
    const body = {
      device_id: deviceId(ref),
      failed_part: nonBlank('part', opts.part),
      reason: nonBlank('reason', opts.reason),
      ...(opts.vendorCase ? { vendor_case_id: nonBlank('vendor-case', opts.vendorCase) } : {}),
    };
    const opened = await unwrap(
      rt.hub().api.POST('/v1/rma', { body, headers: idempotencyHeaders(opts.idempotencyKey) }),
    );
    await printObject(opened, opts.output, rt.out, rmaColumns);
  });

  const update = rma
    .command('update <id>')
    .description(
      'move a case (with a reason) or set its vendor case id. shipped starts the device.rma_ship job (the device ' +
        'goes to rma), replaced the device.rma_return job (back to discovered, to be enrolled again); closed from ' +
        'open: nothing was shipped',
    )
    .addOption(new Option('--state <state>', 'the state to move the case to').choices(rmaStates))
    .option('--reason <text>', 'why (required with --state): kept in the history and the job')
    .option('--vendor-case <id>', "the vendor's case id")
    .option('--clear-vendor-case', "forget the vendor's case id");
  mutationOptions(update);
  examples(
    update,
    'fleetctl rma update 0b6f… --state shipped --reason "picked up by the vendor" --wait',
    'fleetctl rma update 0b6f… --vendor-case NV-123456',
  );
  update.action(async (id: string, opts: UpdateOptions) => {
    const body: RmaPatch = {};
    if (opts.state) {
      if (opts.reason === undefined) throw new UsageError('--state needs --reason: say why the case moves');
      body.state = opts.state;
    }
    if (opts.reason !== undefined) body.reason = nonBlank('reason', opts.reason);
    if (opts.vendorCase !== undefined && opts.clearVendorCase)
      throw new UsageError('give --vendor-case or --clear-vendor-case, not both');
    if (opts.vendorCase !== undefined) body.vendor_case_id = nonBlank('vendor-case', opts.vendorCase);
    if (opts.clearVendorCase) body.vendor_case_id = null;
    if (body.state === undefined && body.vendor_case_id === undefined)
      throw new UsageError('nothing to change: give --state (with --reason), --vendor-case or --clear-vendor-case');
    const changed = await unwrap(
      rt.hub().api.PATCH('/v1/rma/{id}', { params: { path: { id } }, body, ...headersOf(opts) }),
    );
    if (changed.job) {
      if (opts.wait) return reportJob(rt, changed.job, opts);
      await printObject(changed, opts.output, rt.out, rmaColumns);
      if (opts.output === 'table' || opts.output === 'wide')
        rt.note(`${changed.job.kind} started: follow it with: fleetctl job wait ${changed.job.id}`);
      return;
    }
    await printObject(changed, opts.output, rt.out, rmaColumns);
  });
}

/** The case as key/value lines, its history and, once closed after a return, the swap. */
export function rmaText(c: RmaCase): string {
  let out = fields([
    ['ID', c.id],
    ['Device', c.device_id],
    ['Site', c.site_id],
    ['State', c.state],
    ['Part', c.failed_part],
    ['Fault', c.fault_class],
    ['Reason', c.reason],
    ['Vendor case', c.vendor_case_id],
    ['Opened', `${c.created_at} by ${c.opened_by}${c.job_id ? ` (remediation job ${c.job_id})` : ''}`],
    ['Closed', c.closed_at],
    ['Next moves', c.operator_moves.length ? c.operator_moves.join(', ') : 'none by an operator'],
  ]);
  const history = new StreamingTable<RmaCase['history'][number]>([
    { header: 'AT', value: (h) => h.at },
    { header: 'MOVE', value: (h) => `${h.from ?? '(new)'} -> ${h.to}` },
    { header: 'BY', value: (h) => h.by },
    { header: 'JOB', value: (h) => h.job_id },
    { header: 'REASON', value: (h) => h.reason },
  ]);
  out += `\nHistory:\n${indent(history.render(c.history))}`;
  if (c.swap) {
    const swap = new StreamingTable<NonNullable<RmaCase['swap']>[number]>([
      { header: 'PART', value: (s) => s.part },
      { header: 'OLD SERIAL', value: (s) => s.old },
      { header: 'NEW SERIAL', value: (s) => s.new },
    ]);
    out += `\nSwap:\n${c.swap.length ? indent(swap.render(c.swap)) : '  no serial changed\n'}`;
  }
  return out;
}

const indent = (text: string) => text.replace(/^(?=.)/gm, '  ');

import { createReadStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { octetStream, unwrap, type components } from '@fleet/client';
import type { SingleBar } from 'cli-progress';
import { Option, type Command } from 'commander';
import { idempotencyHeaders } from '../api/idempotency.js';
import { getDevice } from '../api/lookup.js';
import { items, pages } from '../api/pages.js';
import { UsageError } from '../exit-codes.js';
import type { Column, OutputFormat } from '../output/format.js';
import { fields } from '../output/table.js';
import { listPrinter, printObject } from '../output/printer.js';
import { bytes, resources } from '../resources.js';
import type { Hub } from '../api/hub.js';
import type { Runtime } from '../runtime.js';
import { filterQuery } from './get.js';
import { headersOf, mutationOptions, reportJob, type MutationOptions } from './job-result.js';
import { collect, examples, outputOption } from './options.js';

type DeviceCompliance = components['schemas']['DeviceCompliance'];

export function registerFirmware(program: Command, rt: Runtime): void {
  const firmware = program.command('firmware').description('firmware packages, compliance and device updates');
  examples(
    firmware,
    'fleetctl firmware upload gb200-bmc-25.10.fwpkg',
    'fleetctl firmware compliance --site dev-01 --status outdated',
    'fleetctl firmware update device 5f0c2f1e-… --wait',
  );
  registerUpload(firmware, rt);
  registerCompliance(firmware, rt);
  registerUpdate(firmware, rt);
}

const packageColumns = resources.find((r) => r.names[0] === 'packages')!.columns as never;

function registerUpload(firmware: Command, rt: Runtime): void {
  const cmd = firmware
    .command('upload <file>')
    .description(
      'stream a firmware package (PLDM, DSP0267) or an NVOS image to the hub; it checks and parses it on the way in',
    )
    .addOption(new Option('--format <format>', 'package format').choices(['pldm', 'nvos']).default('pldm'))
    .option('--file-name <name>', 'the name the hub records (default: the file name)')
    .option('--idempotency-key <key>', 'retry-safe key (default: a new one)');
  outputOption(cmd);
  examples(
    cmd,
    'fleetctl firmware upload ./gb200-bmc-25.10.fwpkg',
    'fleetctl firmware upload nvos-25.02.4282.bin --format nvos',
  );
  cmd.action(
    async (
      file: string,
      opts: { format: 'pldm' | 'nvos'; fileName?: string; idempotencyKey?: string; output: OutputFormat },
    ) => {
      let size: number;
      try {
        size = statSync(file).size;
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code}`);
      }
      const bar = await uploadBar(rt, size);
      let sent = 0;
      // The file is streamed: a multi-gigabyte image never sits in memory.
      const counted = createReadStream(file).pipe(
        new Transform({
          transform(chunk: Buffer, _enc, done) {
            sent += chunk.length;
            bar?.update(sent, { sent: bytes(sent) });
            done(null, chunk);
          },
        }),
      );
      try {
        const pkg = await unwrap(
          rt.hub().api.POST('/v1/firmware/packages', {
            params: { query: { file_name: opts.fileName ?? basename(file), format: opts.format } },
            body: Readable.toWeb(counted) as never,
            ...octetStream,
            headers: {
              ...octetStream.headers,
              'content-length': String(size),
              ...idempotencyHeaders(opts.idempotencyKey),
            },
            duplex: 'half',
          }),
        );
        bar?.stop();
        await printObject(pkg, opts.output, rt.out, packageColumns);
      } finally {
        bar?.stop();
        counted.destroy();
      }
    },
  );
}

/** A bar on a terminal; nothing when stderr is a pipe or a file (logs want no redraws). */
async function uploadBar(rt: Runtime, size: number): Promise<SingleBar | undefined> {
  if (!rt.interactive) return undefined;
  const { Presets, SingleBar } = await import('cli-progress');
  const bar = new SingleBar(
    {
      stream: rt.stderr,
      format: 'uploading [{bar}] {percentage}% {sent}/{size} eta {eta_formatted}',
      hideCursor: true,
    },
    Presets.shades_classic,
  );
  bar.start(size, 0, { sent: bytes(0), size: bytes(size) });
  return bar;
}

const complianceColumns: Column<DeviceCompliance>[] = [
  { header: 'DEVICE', value: (c) => c.device_id },
  { header: 'NAME', value: (c) => c.name },
  { header: 'NODE TYPE', value: (c) => c.node_type },
  { header: 'STATUS', value: (c) => c.status },
  {
    header: 'OUTDATED',
    value: (c) => c.components.filter((x) => !x.compliant).map((x) => `${x.id}:${x.installed ?? '?'}->${x.desired}`),
  },
  { header: 'SITE', value: (c) => c.site_id, wide: true },
  { header: 'RACK', value: (c) => c.rack_id, wide: true },
  { header: 'MANIFEST', value: (c) => c.manifest_id, wide: true },
];

const complianceFilters = {
  names: ['compliance'] as [string],
  list: '/v1/firmware/compliance',
  columns: [],
  example: '',
  filters: [
    { flag: 'site', param: 'site_id', description: 'site ID' },
    { flag: 'rack', param: 'rack_id', description: 'rack ID' },
    { flag: 'hardware-type', param: 'hardware_type', description: 'node type' },
    { flag: 'status', param: 'status', description: 'compliant, outdated, unknown, no_manifest' },
  ],
};

function registerCompliance(firmware: Command, rt: Runtime): void {
  const cmd = firmware
    .command('compliance')
    .description("every device's installed firmware against its default manifest");
  for (const f of complianceFilters.filters)
    cmd.option(`--${f.flag} <value>`, `${f.description} (repeatable)`, collect);
  cmd.option('--summary', 'only the counts by status');
  outputOption(cmd);
  examples(
    cmd,
    'fleetctl firmware compliance --site dev-01 --status outdated',
    'fleetctl firmware compliance --summary -o json',
  );
  cmd.action(async (opts: { summary?: boolean; output: OutputFormat } & Record<string, unknown>) => {
    const query = filterQuery(complianceFilters, opts);
    if (opts.summary) {
      const { status: _status, ...summaryQuery } = query;
      const summary = await unwrap(
        rt.hub().raw.GET('/v1/firmware/compliance/summary', { params: { query: summaryQuery } }),
      );
      const s = summary as { total: number; by_status: Record<string, number> };
      return printObject(summary, opts.output, rt.out, () =>
        fields([['Total', s.total], ...Object.entries(s.by_status)]),
      );
    }
    const printer = listPrinter(opts.output, complianceColumns, rt.out);
    for await (const page of items(pages<DeviceCompliance>(rt.hub(), complianceFilters.list, query, 500)))
      await printer.page(page);
    await printer.end();
  });
}

function registerUpdate(firmware: Command, rt: Runtime): void {
  const cmd = firmware
    .command('update <target> <device>')
    .description(
      "update a device's firmware to its manifest (target: device). Compute trays and shelves take the default " +
        'manifest of their node type unless --manifest is given; switch trays need --manifest',
    )
    .option('--manifest <id>', 'manifest ID')
    .option('--force', 'push components that are already at the desired version');
  mutationOptions(cmd);
  examples(
    cmd,
    'fleetctl firmware update device 5f0c2f1e-… --wait',
    'fleetctl firmware update device 9a1e… --manifest 41d2… --force',
  );
  cmd.action(async (target: string, ref: string, opts: MutationOptions & { manifest?: string; force?: boolean }) => {
    if (target !== 'device')
      throw new UsageError(`firmware update ${target}: only devices (campaigns: fleetctl campaign create)`);
    const hub = rt.hub();
    const device = await getDevice(hub, ref);
    const path = { params: { path: { id: device.id } }, ...headersOf(opts) };
    if (await updatesThroughNvos(hub, device.node_type)) {
      if (!opts.manifest) throw new UsageError(`${device.name} is a switch tray: give --manifest`);
      const body = { manifest_id: opts.manifest, force: Boolean(opts.force) };
      return reportJob(
        rt,
        await unwrap(hub.api.POST('/v1/devices/{id}/switch-firmware-update', { ...path, body })),
        opts,
      );
    }
    const body = { force: Boolean(opts.force), ...(opts.manifest ? { manifest_id: opts.manifest } : {}) };
    return reportJob(rt, await unwrap(hub.api.POST('/v1/devices/{id}/firmware-update', { ...path, body })), opts);
  });
}

/** Switch trays update their platform firmware through NVOS: the hub's hardware table says which node types do. */
async function updatesThroughNvos(hub: Hub, nodeType: string | null): Promise<boolean> {
  if (!nodeType) return false;
  const hardware = await unwrap(hub.api.GET('/v1/hardware'));
  return hardware.items.some((h) => h.node_type === nodeType && h.firmware_profile === 'nvos-platform');
}

import { unwrap } from '@fleet/client';
import type { Command } from 'commander';
import { deviceId } from '../api/lookup.js';
import type { Runtime } from '../runtime.js';
import { headersOf, mutationOptions, reportJob, type MutationOptions } from './job-result.js';
import { examples } from './options.js';

export function registerNvos(program: Command, rt: Runtime): void {
  const nvos = program.command('nvos').description('NVOS on NVLink switch trays');
  const install = nvos
    .command('install <device>')
    .description('install an NVOS image (a package uploaded with --format nvos) on a switch tray')
    .requiredOption('--package <id>', 'the NVOS image package ID');
  mutationOptions(install);
  examples(
    install,
    'fleetctl firmware upload nvos-25.02.4282.bin --format nvos -o id',
    'fleetctl nvos install 9a1e… --package 41d2… --wait',
  );
  install.action(async (device: string, opts: MutationOptions & { package: string }) => {
    const job = await unwrap(
      rt.hub().api.POST('/v1/devices/{id}/nvos-install', {
        params: { path: { id: deviceId(device) } },
        body: { package_id: opts.package },
        ...headersOf(opts),
      }),
    );
    return reportJob(rt, job, opts);
  });
  examples(nvos, 'fleetctl nvos install 9a1e… --package 41d2… --wait');
}

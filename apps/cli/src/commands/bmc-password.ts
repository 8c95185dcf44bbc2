import { unwrap } from '@fleet/client';
import type { Command } from 'commander';
import { deviceId, resolveRack } from '../api/lookup.js';
import { UsageError } from '../exit-codes.js';
import type { Runtime } from '../runtime.js';
import { headersOf, mutationOptions, reportJob, type MutationOptions } from './job-result.js';
import { examples, positiveInt } from './options.js';

/** fleetctl bmc-rotate-password: the BMC credential rotation (docs/security.md#bmc-credential-rotation). */
export function registerBmcPassword(program: Command, rt: Runtime): void {
  const cmd = program
    .command('bmc-rotate-password <target> <ref>')
    .description(
      "rotate the BMC account password of a device, or of every device of a rack, into the site's secret store " +
        '(target: device|rack)',
    )
    .option('--site <site>', 'the site of a rack given by name')
    .option('--concurrency <n>', 'racks: devices rotated at once (default 4)', positiveInt);
  mutationOptions(cmd);
  examples(
    cmd,
    'fleetctl bmc-rotate-password device 5f0c2f1e-… --wait',
    'fleetctl bmc-rotate-password rack rack-01 --site dev-01 --concurrency 8 --wait',
  );
  cmd.action(async (target: string, ref: string, opts: MutationOptions & { site?: string; concurrency?: number }) => {
    const hub = rt.hub();
    if (target === 'device') {
      if (opts.concurrency !== undefined)
        throw new UsageError('bmc-rotate-password device: --concurrency is for racks');
      const job = await unwrap(
        hub.api.POST('/v1/devices/{id}/bmc-password-rotation', {
          params: { path: { id: deviceId(ref) } },
          body: {},
          ...headersOf(opts),
        }),
      );
      return reportJob(rt, job, opts);
    }
    if (target !== 'rack') throw new UsageError(`bmc-rotate-password ${target}: target must be device or rack`);
    const job = await unwrap(
      hub.api.POST('/v1/racks/{id}/bmc-password-rotation', {
        params: { path: { id: await resolveRack(hub, ref, opts.site) } },
        body: opts.concurrency === undefined ? {} : { concurrency: opts.concurrency },
        ...headersOf(opts),
      }),
    );
    return reportJob(rt, job, opts);
  });
}

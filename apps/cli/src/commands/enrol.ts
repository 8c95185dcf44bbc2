import { unwrap } from '@fleet/client';
import type { Command } from 'commander';
import { deviceId, resolveRack } from '../api/lookup.js';
import { UsageError } from '../exit-codes.js';
import type { Runtime } from '../runtime.js';
import { headersOf, mutationOptions, reportJob, type MutationOptions } from './job-result.js';
import { examples } from './options.js';

interface EnrolOptions extends MutationOptions {
  site?: string;
}

/** What --wait does at a failed stage: these jobs wait for a person rather than fail. */
const decisionNote =
  'A stage that fails for some devices waits for `fleetctl job decide`; with --wait, the waiting devices and the ' +
  'command are printed and the wait goes on.';

export function registerEnrol(program: Command, rt: Runtime): void {
  const enrol = program
    .command('enrol <target> <id>')
    .summary('enrol a rack (as a unit) or a device: prove the hardware, firmware baseline, burn-in, certify')
    .description(
      'enrol a rack as a unit or one device: BMC, credentials, inventory and profile, NVLink topology (racks), ' +
        'firmware baseline, burn-in, certified. Devices must be discovered or failed. target: rack|device\n\n' +
        decisionNote,
    )
    .option('--site <site>', 'the site of a rack given by name');
  mutationOptions(enrol);
  examples(enrol, 'fleetctl enrol rack rack-01 --site dev-01 --wait', 'fleetctl enrol device 5f0c2f1e-… --wait');
  enrol.action(async (target: string, ref: string, opts: EnrolOptions) => {
    const hub = rt.hub();
    if (target === 'rack') {
      const id = await resolveRack(hub, ref, opts.site);
      const job = await unwrap(hub.api.POST('/v1/racks/{id}/enrol', { params: { path: { id } }, ...headersOf(opts) }));
      return reportJob(rt, job, opts);
    }
    if (target === 'device') {
      if (opts.site) throw new UsageError('enrol device: --site is for racks given by name; devices go by ID');
      const job = await unwrap(
        hub.api.POST('/v1/devices/{id}/enrol', { params: { path: { id: deviceId(ref) } }, ...headersOf(opts) }),
      );
      return reportJob(rt, job, opts);
    }
    throw new UsageError(`enrol ${target}: target must be rack or device`);
  });

  const burnIn = program
    .command('burn-in <target> <device>')
    .summary("burn a compute tray in on its site's SLURM, then certify it")
    .description(
      "burn an enrolled or certified compute tray in on its site's SLURM (GPU stress, memory, NVLink all-reduce), " +
        `then certify it (target: device)\n\n${decisionNote}`,
    );
  mutationOptions(burnIn);
  examples(burnIn, 'fleetctl burn-in device 5f0c2f1e-… --wait');
  burnIn.action(async (target: string, ref: string, opts: MutationOptions) => {
    if (target !== 'device') throw new UsageError(`burn-in ${target}: only devices (compute trays) burn in alone`);
    const job = await unwrap(
      rt.hub().api.POST('/v1/devices/{id}/burn-in', { params: { path: { id: deviceId(ref) } }, ...headersOf(opts) }),
    );
    return reportJob(rt, job, opts);
  });
}

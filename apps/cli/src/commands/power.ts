import { unwrap, type paths } from '@fleet/client';
import { Option, type Command } from 'commander';
import { deviceId, resolveRack } from '../api/lookup.js';
import { UsageError } from '../exit-codes.js';
import type { Runtime } from '../runtime.js';
import { headersOf, mutationOptions, reportJob, type MutationOptions } from './job-result.js';
import { examples, nonNegativeNumber, positiveInt } from './options.js';

type DeviceAction = paths['/v1/devices/{id}/power']['post']['requestBody']['content']['application/json']['action'];
type Timings = NonNullable<
  NonNullable<paths['/v1/racks/{id}/cold-reboot']['post']['requestBody']>['content']['application/json']['timings']
>;

/** fleetctl's action names: `cycle` is the hub's `power-cycle`; the others are the hub's own. */
const deviceActions: Record<string, DeviceAction> = {
  on: 'on',
  off: 'off',
  cycle: 'power-cycle',
  'force-on': 'force-on',
  'force-off': 'force-off',
  'graceful-shutdown': 'graceful-shutdown',
  'graceful-restart': 'graceful-restart',
  'force-restart': 'force-restart',
};
const rackOps = ['on', 'off', 'cycle'] as const;

interface PowerOptions extends MutationOptions {
  site?: string;
}

export function registerPower(program: Command, rt: Runtime): void {
  const power = program
    .command('power <action> <target> <id>')
    .summary('power a device, a rack (ordered) or a whole site')
    .description(
      `power a device, a rack (ordered: shelves, switches, compute) or every device of a site.\n` +
        `action: ${Object.keys(deviceActions).join('|')} (racks: ${rackOps.join('|')}); target: device|rack|site`,
    )
    .option('--site <site>', 'the site of a rack given by name');
  mutationOptions(power);
  examples(
    power,
    'fleetctl power cycle device 5f0c2f1e-… --wait',
    'fleetctl power on rack rack-01 --site dev-01 --wait',
    'fleetctl power off site dev-01 --idempotency-key maint-2031',
  );
  power.action(async (action: string, target: string, id: string, opts: PowerOptions) => {
    const hub = rt.hub();
    if (target === 'device') {
      const hubAction = deviceActions[action];
      if (!hubAction) throw new UsageError(`power ${action}: expected ${Object.keys(deviceActions).join('|')}`);
      const job = await unwrap(
        hub.api.POST('/v1/devices/{id}/power', {
          params: { path: { id: deviceId(id) } },
          body: { action: hubAction },
          ...headersOf(opts),
        }),
      );
      return reportJob(rt, job, opts);
    }
    if (target === 'rack') {
      const op = rackOps.find((o) => o === action);
      if (!op) throw new UsageError(`power ${action} rack: racks take ${rackOps.join('|')}`);
      const rack = await resolveRack(hub, id, opts.site);
      const job = await unwrap(
        hub.api.POST('/v1/racks/{id}/power', { params: { path: { id: rack } }, body: { op }, ...headersOf(opts) }),
      );
      return reportJob(rt, job, opts);
    }
    if (target === 'site') {
      const hubAction = deviceActions[action];
      if (!hubAction) throw new UsageError(`power ${action}: expected ${Object.keys(deviceActions).join('|')}`);
      const job = await unwrap(
        hub.api.POST('/v1/power-batches', { body: { site_id: id, action: hubAction }, ...headersOf(opts) }),
      );
      return reportJob(rt, job, opts);
    }
    throw new UsageError(`power ${action} ${target}: target must be device, rack or site`);
  });

  registerColdReboot(program, rt);
  registerBmcReset(program, rt);
}

/** The cold-reboot timing overrides as flags: `--discharge-floor 5` is `timings.dischargeFloorS: 5`. */
const timingFlags: { key: keyof Timings; flag: string; integer?: boolean; description: string }[] = [
  { key: 'prestageShutdownFloorS', flag: 'prestage-shutdown-floor', description: 'seconds hosts get to shut down' },
  { key: 'prestageShutdownPollMaxS', flag: 'prestage-shutdown-poll-max', description: 'longest wait for hosts off' },
  { key: 'dischargeFloorS', flag: 'discharge-floor', description: 'seconds the rack stays without AC' },
  { key: 'dischargePollMaxS', flag: 'discharge-poll-max', description: 'longest wait for discharge' },
  { key: 'bmcUpFloorS', flag: 'bmc-up-floor', description: 'seconds before BMCs are probed' },
  { key: 'bmcUpPollMaxS', flag: 'bmc-up-poll-max', description: 'longest wait for BMCs to answer' },
  { key: 'computeBootWaitS', flag: 'compute-boot-wait', description: 'seconds compute trays get to boot' },
  { key: 'pollIntervalS', flag: 'poll-interval', description: 'seconds between probes' },
  { key: 'nvosHelloAttempts', flag: 'nvos-hello-attempts', integer: true, description: 'NVUE probes per switch' },
  { key: 'nvosHelloBackoffS', flag: 'nvos-hello-backoff', description: 'first NVUE probe backoff (doubles)' },
];

function registerColdReboot(program: Command, rt: Runtime): void {
  const cmd = program
    .command('cold-reboot <target> <rack>')
    .description('run the NVL72 cold-reboot runbook on a rack, stage by stage (target: rack)')
    .option('--site <site>', 'the site of a rack given by name');
  for (const t of timingFlags) {
    const parse = t.integer ? positiveInt : nonNegativeNumber;
    cmd.addOption(new Option(`--${t.flag} <${t.integer ? 'n' : 's'}>`, t.description).argParser(parse));
  }
  mutationOptions(cmd);
  examples(cmd, 'fleetctl cold-reboot rack rack-01 --site dev-01 --discharge-floor 5 --compute-boot-wait 5 --wait');
  cmd.action(async (target: string, ref: string, opts: PowerOptions & Record<string, unknown>) => {
    if (target !== 'rack') throw new UsageError(`cold-reboot ${target}: only racks cold-reboot`);
    const hub = rt.hub();
    const id = await resolveRack(hub, ref, opts.site);
    const timings: Timings = {};
    for (const t of timingFlags) {
      const value = opts[t.flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())];
      if (value !== undefined) timings[t.key] = value as number;
    }
    const job = await unwrap(
      hub.api.POST('/v1/racks/{id}/cold-reboot', {
        params: { path: { id } },
        body: Object.keys(timings).length ? { timings } : {},
        ...headersOf(opts),
      }),
    );
    return reportJob(rt, job, opts);
  });
}

function registerBmcReset(program: Command, rt: Runtime): void {
  const cmd = program
    .command('bmc-reset <device>')
    .description("reset a device's BMC (or its HMC)")
    .addOption(new Option('--manager <manager>', 'which manager').choices(['bmc', 'hmc']).default('bmc'));
  mutationOptions(cmd);
  examples(cmd, 'fleetctl bmc-reset 5f0c2f1e-… --wait', 'fleetctl bmc-reset 5f0c2f1e-… --manager hmc');
  cmd.action(async (device: string, opts: MutationOptions & { manager: 'bmc' | 'hmc' }) => {
    const job = await unwrap(
      rt.hub().api.POST('/v1/devices/{id}/bmc-reset', {
        params: { path: { id: deviceId(device) } },
        body: { manager: opts.manager },
        ...headersOf(opts),
      }),
    );
    return reportJob(rt, job, opts);
  });
}

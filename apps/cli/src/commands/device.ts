import { unwrap, type components } from '@fleet/client';
import { Option, type Command } from 'commander';
import { deviceId } from '../api/lookup.js';
import { UsageError } from '../exit-codes.js';
import { age, type OutputFormat } from '../output/format.js';
import { printObject } from '../output/printer.js';
import { fields, StreamingTable } from '../output/table.js';
import type { Runtime } from '../runtime.js';
import { headersOf, mutationOptions, reportJob, type MutationOptions } from './job-result.js';
import { examples, outputOption } from './options.js';

type DeviceHealth = components['schemas']['DeviceHealth'];
type FaultClass = DeviceHealth['faults'][number]['class'];
const faultClasses: FaultClass[] = ['unreachable', 'credentials', 'gpu', 'psu', 'leak', 'thermal', 'chassis'];

interface HoldOptions extends MutationOptions {
  reason: string;
  faultClass?: FaultClass;
  remediate?: boolean;
}

const reasonHelp = "why: kept in the audit log and the device's history";

/** The reason the hub requires, trimmed; a blank one never reaches it. */
function reasonOf(opts: { reason: string }): string {
  const reason = opts.reason.trim();
  if (!reason) throw new UsageError("--reason is blank: say why (it stays in the device's history)");
  return reason;
}

export function registerDevice(program: Command, rt: Runtime): void {
  const device = program
    .command('device')
    .description('day-2 operations on one device: its health, quarantine, remediation and release');
  examples(
    device,
    'fleetctl device health 5f0c2f1e-…',
    'fleetctl device quarantine 5f0c2f1e-… --reason "GPU 3 Xid 79 on the host" --wait',
    'fleetctl device release 5f0c2f1e-… --reason "reseated GPU 3" --wait',
  );

  const quarantine = device
    .command('quarantine <device>')
    .description(
      'hold a device: campaigns, power batches, rack sequences and enrolment leave it alone until it is released',
    )
    .requiredOption('--reason <text>', reasonHelp)
    .option('--remediate', "also run the fault's playbook once it is held")
    .addOption(faultClassOption());
  mutationOptions(quarantine);
  examples(quarantine, 'fleetctl device quarantine 5f0c2f1e-… --reason "leak under the tray" --wait');
  quarantine.action(async (ref: string, opts: HoldOptions) => {
    const body = {
      reason: reasonOf(opts),
      remediate: Boolean(opts.remediate),
      ...(opts.faultClass ? { fault_class: opts.faultClass } : {}),
    };
    const job = await unwrap(
      rt.hub().api.POST('/v1/devices/{id}/quarantine', {
        params: { path: { id: deviceId(ref) } },
        body,
        ...headersOf(opts),
      }),
    );
    return reportJob(rt, job, opts);
  });

  const remediate = device
    .command('remediate <device>')
    .description(
      "run the playbook of a device's fault (held first if it is not): each step verified by fresh health readings; " +
        'a playbook that runs out leaves it quarantined and opens an RMA case',
    )
    .requiredOption('--reason <text>', reasonHelp)
    .addOption(faultClassOption());
  mutationOptions(remediate);
  examples(
    remediate,
    'fleetctl device remediate 5f0c2f1e-… --reason "BMC hung again" --wait',
    'fleetctl device remediate 5f0c2f1e-… --reason "GPU off the bus" --fault-class gpu',
  );
  remediate.action(async (ref: string, opts: HoldOptions) => {
    const body = { reason: reasonOf(opts), ...(opts.faultClass ? { fault_class: opts.faultClass } : {}) };
    const job = await unwrap(
      rt.hub().api.POST('/v1/devices/{id}/remediate', {
        params: { path: { id: deviceId(ref) } },
        body,
        ...headersOf(opts),
      }),
    );
    return reportJob(rt, job, opts);
  });

  const release = device
    .command('release <device>')
    .description(
      'let a quarantined device go: a health check, then back where it was; held again (the job failed, naming the ' +
        'faults) if the check does not pass',
    )
    .requiredOption('--reason <text>', reasonHelp);
  mutationOptions(release);
  examples(release, 'fleetctl device release 5f0c2f1e-… --reason "leak fixed, tray dry" --wait');
  release.action(async (ref: string, opts: HoldOptions) => {
    const job = await unwrap(
      rt.hub().api.POST('/v1/devices/{id}/release', {
        params: { path: { id: deviceId(ref) } },
        body: { reason: reasonOf(opts) },
        ...headersOf(opts),
      }),
    );
    return reportJob(rt, job, opts);
  });

  const health = device
    .command('health <device>')
    .description("the device's last health reading from its site's observer (a 404 until it has been observed)");
  outputOption(health);
  examples(health, 'fleetctl device health 5f0c2f1e-…', 'fleetctl device health 5f0c2f1e-… -o json');
  health.action(async (ref: string, opts: { output: OutputFormat }) => {
    const reading = await unwrap(
      rt.hub().api.GET('/v1/devices/{id}/health', { params: { path: { id: deviceId(ref) } } }),
    );
    await printObject(reading, opts.output === 'wide' ? 'table' : opts.output, rt.out, healthText);
  });
}

function faultClassOption(): Option {
  return new Option(
    '--fault-class <class>',
    "the fault to remediate (default: the device's last observed one)",
  ).choices(faultClasses);
}

const yesNo = (v: boolean | null) => (v === null ? null : v ? 'yes' : 'no');

/** The reading as key/value lines, then its faults as a table. */
export function healthText(h: DeviceHealth): string {
  let out = fields([
    ['Device', h.device_id],
    ['Healthy', h.faults.length === 0 ? 'yes' : `no (${h.faults.length} fault${h.faults.length === 1 ? '' : 's'})`],
    ['Reachable', yesNo(h.reachable)],
    ['Credentials', h.credentials_ok === null ? null : h.credentials_ok ? 'accepted' : 'refused'],
    ['Power', h.power_state],
    ['Observed', `${h.observed_at} (${age(h.observed_at)} ago)`],
    ['Since', `${h.changed_at} (${h.observations} reading${h.observations === 1 ? '' : 's'} in a row)`],
  ]);
  if (h.faults.length) {
    const table = new StreamingTable<DeviceHealth['faults'][number]>([
      { header: 'CLASS', value: (f) => f.class },
      { header: 'COMPONENT', value: (f) => f.component },
      { header: 'SEVERITY', value: (f) => f.severity },
      { header: 'MESSAGE', value: (f) => f.message },
    ]);
    out += `\nFaults:\n${table.render(h.faults).replace(/^(?=.)/gm, '  ')}`;
  }
  return out;
}

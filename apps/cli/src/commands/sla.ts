import type { Command } from 'commander';
import { slaBreaches, type Resource } from '../resources.js';
import type { Runtime } from '../runtime.js';
import { registerResource } from './get.js';
import { examples } from './options.js';

export function registerSla(program: Command, rt: Runtime): void {
  const sla = program
    .command('sla')
    .description('stuck-state SLAs: devices, jobs and campaigns past the time their state may last (docs/sla.md)');
  examples(sla, 'fleetctl sla breaches --status open', 'fleetctl sla breaches --object 5f0c2f1e-… -o json');
  registerResource(sla, rt, slaBreaches as Resource, ['breaches', 'breach']);
}

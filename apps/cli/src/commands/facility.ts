import type { Command } from 'commander';
import { facilityEvents, type Resource } from '../resources.js';
import type { Runtime } from '../runtime.js';
import { registerResource } from './get.js';
import { examples } from './options.js';

export function registerFacility(program: Command, rt: Runtime): void {
  const facility = program
    .command('facility')
    .description("a building management system's events on racks (leak, power feed, cooling, smoke) and what they did");
  examples(
    facility,
    'fleetctl facility events --state awaiting_approval',
    'fleetctl facility events --kind leak -o wide',
  );
  registerResource(facility, rt, facilityEvents as Resource, ['events', 'event']);
}

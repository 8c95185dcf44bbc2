import { unwrap } from '@fleet/client';
import type { Command } from 'commander';
import type { OutputFormat } from '../output/format.js';
import { printObject } from '../output/printer.js';
import type { Runtime } from '../runtime.js';
import { examples, outputOption } from './options.js';

/** Adding and removing sites by hand (docs/deployment.md, "Sites"); `fleetctl get sites` lists them. */
export function registerSites(program: Command, rt: Runtime): void {
  const sites = program.command('sites').description('add and remove sites (docs/deployment.md, "Sites")');
  examples(sites, 'fleetctl sites add dc-c --name "DC C"', 'fleetctl sites remove dc-c');

  const add = sites
    .command('add <id>')
    .description("register a site: prints its task queue and its satellite's token (shown this once)")
    .requiredOption('--name <name>', 'the site name people read');
  outputOption(add);
  examples(add, 'fleetctl sites add dc-c --name "DC C" -o json');
  add.action(async (id: string, opts: { name: string; output: OutputFormat }) => {
    const site = await unwrap(rt.hub().api.POST('/v1/sites', { body: { id, name: opts.name } }));
    await printObject(site, opts.output, rt.out, [
      { header: 'ID', value: (s) => s.id },
      { header: 'TASK QUEUE', value: (s) => s.task_queue },
      { header: 'SATELLITE TOKEN', value: (s) => s.satellite_token.token ?? '(shown once already)' },
    ]);
    if (opts.output === 'table' || opts.output === 'wide')
      rt.note("put the token into the satellite's secret store under its hub.tokenRef; it is not shown again");
  });

  const remove = sites
    .command('remove <id>')
    .description('drain a site: new jobs on it are refused; it is removed once its running jobs have finished');
  outputOption(remove);
  examples(remove, 'fleetctl sites remove dc-c');
  remove.action(async (id: string, opts: { output: OutputFormat }) => {
    const site = await unwrap(rt.hub().api.DELETE('/v1/sites/{id}', { params: { path: { id } } }));
    await printObject(site, opts.output, rt.out, [
      { header: 'ID', value: (s) => s.id },
      { header: 'STATE', value: (s) => s.state },
      { header: 'DRAINING SINCE', value: (s) => s.draining_since ?? '-' },
    ]);
  });
}

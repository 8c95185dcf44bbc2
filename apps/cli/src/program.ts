import { Command } from 'commander';
import { registerBmcPassword } from './commands/bmc-password.js';
import { registerCampaign } from './commands/campaign.js';
import { registerCompletion } from './commands/completion.js';
import { registerConfig } from './commands/config.js';
import { registerDescribe } from './commands/describe.js';
import { registerDevice } from './commands/device.js';
import { registerEnrol } from './commands/enrol.js';
import { registerFacility } from './commands/facility.js';
import { registerFirmware } from './commands/firmware.js';
import { registerGet } from './commands/get.js';
import { registerJob } from './commands/job.js';
import { registerNvos } from './commands/nvos.js';
import { examples } from './commands/options.js';
import { registerPower } from './commands/power.js';
import { registerRma } from './commands/rma.js';
import { registerSites } from './commands/sites.js';
import { registerSla } from './commands/sla.js';
import { Runtime } from './runtime.js';

/** The whole command tree, bound to one runtime (stdio, environment). */
export function buildProgram(
  env: NodeJS.ProcessEnv = process.env,
  stdout: NodeJS.WriteStream = process.stdout,
  stderr: NodeJS.WriteStream = process.stderr,
): Command {
  const program = new Command('fleetctl')
    .description(
      "Fleet's command line: inventory, enrolment, power, firmware, campaigns, jobs and day-2 operations (health, " +
        "quarantine, RMA, SLA breaches, facility events) on the hub's API",
    )
    .option('--context <name>', 'the config context to use (default: $FLEET_CONTEXT, else the current one)')
    // Settings subcommands inherit: errors throw instead of exiting, so main maps them to exit codes.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ styleTitle: (title) => (title === 'Usage:' ? 'usage:' : title), showGlobalOptions: true })
    .configureOutput({ writeOut: (s) => stdout.write(s), writeErr: (s) => stderr.write(s) });
  program.addHelpText(
    'after',
    '\nExit codes: 0 ok, 1 job or campaign failed, 2 usage error, 3 the hub refused (4xx), 4 hub unreachable.\n',
  );
  examples(
    program,
    'fleetctl config set-context dev --hub http://127.0.0.1:8080 --token-env FLEET_TOKEN',
    'fleetctl login',
    'fleetctl get devices --site dev-01',
    'fleetctl power cycle rack rack-01 --site dev-01 --wait',
  );
  const rt = new Runtime(program, env, stdout, stderr);
  registerConfig(program, rt);
  registerGet(program, rt);
  registerDescribe(program, rt);
  registerEnrol(program, rt);
  registerPower(program, rt);
  registerFirmware(program, rt);
  registerCampaign(program, rt);
  registerNvos(program, rt);
  registerBmcPassword(program, rt);
  registerJob(program, rt);
  registerDevice(program, rt);
  registerRma(program, rt);
  registerSites(program, rt);
  registerSla(program, rt);
  registerFacility(program, rt);
  registerCompletion(program, rt);
  return program;
}

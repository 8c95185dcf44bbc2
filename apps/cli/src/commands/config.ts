import { ApiError, unwrap } from '@fleet/client';
import type { Command } from 'commander';
import { connectHub } from '../api/hub.js';
import { saveConfig, selectContext, setContext, type FleetContext } from '../config/config-file.js';
import { resolveToken } from '../config/token.js';
import { UsageError } from '../exit-codes.js';
import { listPrinter, printObject } from '../output/printer.js';
import type { OutputFormat } from '../output/format.js';
import type { Runtime } from '../runtime.js';
import { examples, outputOption } from './options.js';

interface ContextRow {
  current: boolean;
  name: string;
  hub: string;
  ca: string | null;
  token: string;
}

/** A context as listed: where its token comes from, never the token. */
function contextRow(name: string, context: FleetContext, current: string | undefined): ContextRow {
  const token = context.tokenEnv ? `$${context.tokenEnv}` : context.tokenFile ? `file ${context.tokenFile}` : 'none';
  return { current: name === current, name, hub: context.hub, ca: context.ca ?? null, token };
}

export function registerConfig(program: Command, rt: Runtime): void {
  const config = program
    .command('config')
    .description(
      `contexts: which hub, CA bundle and token source to use (${'FLEET_CONFIG'} or ~/.config/fleet/config.yaml)`,
    );
  examples(
    config,
    'fleetctl config set-context dev --hub http://127.0.0.1:8080 --token-env FLEET_TOKEN',
    'fleetctl config use-context dev',
    'fleetctl config get-contexts',
  );

  const set = config
    .command('set-context <name>')
    .description('create or change a context (and make it current if there is none)')
    .option('--hub <url>', "the hub's base URL")
    .option('--ca <file>', 'PEM CA bundle the hub certificate chains to')
    .option('--token-file <file>', 'read the API token from this file (first line)')
    .option('--token-env <var>', 'read the API token from this environment variable');
  examples(
    set,
    'fleetctl config set-context prod --hub https://fleet.example.com --ca /etc/fleet/ca.pem ' +
      '--token-file ~/.fleet-token',
    'fleetctl config set-context dev --hub http://127.0.0.1:8080 --token-env FLEET_TOKEN',
  );
  set.action((name: string, opts: { hub?: string; ca?: string; tokenFile?: string; tokenEnv?: string }) => {
    if (opts.tokenFile && opts.tokenEnv) throw new UsageError('give --token-file or --token-env, not both');
    const before = rt.loadConfig();
    const after = setContext(before, name, opts);
    if (!after.currentContext) after.currentContext = name;
    saveConfig(rt.configPath, after);
    rt.note(`context ${name} ${before.contexts[name] ? 'updated' : 'created'} in ${rt.configPath}`);
  });

  const use = config.command('use-context <name>').description('make a context the current one');
  examples(use, 'fleetctl config use-context prod');
  use.action((name: string) => {
    const current = rt.loadConfig();
    selectContext(current, name, rt.configPath);
    saveConfig(rt.configPath, { ...current, currentContext: name });
    rt.note(`switched to context ${name}`);
  });

  const get = config.command('get-contexts').description('list the contexts (the current one marked *)');
  outputOption(get);
  examples(get, 'fleetctl config get-contexts', 'fleetctl config get-contexts -o json');
  get.action(async (opts: { output: OutputFormat }) => {
    const current = rt.loadConfig();
    const rows = Object.entries(current.contexts).map(([n, c]) => contextRow(n, c, current.currentContext));
    const printer = listPrinter<ContextRow>(
      opts.output,
      [
        { header: 'CURRENT', value: (r) => (r.current ? '*' : '') },
        { header: 'NAME', value: (r) => r.name },
        { header: 'HUB', value: (r) => r.hub },
        { header: 'TOKEN', value: (r) => r.token },
        { header: 'CA', value: (r) => r.ca },
      ],
      rt.out,
    );
    await printer.page(rows);
    await printer.end();
  });

  const currentCmd = config.command('current-context').description('print the current context name');
  examples(currentCmd, 'fleetctl config current-context');
  currentCmd.action(async () => {
    const { name } = selectContext(rt.loadConfig(), rt.requestedContext, rt.configPath);
    await rt.out.write(name + '\n');
  });

  const del = config.command('delete-context <name>').description('remove a context');
  examples(del, 'fleetctl config delete-context old-lab');
  del.action((name: string) => {
    const current = rt.loadConfig();
    selectContext(current, name, rt.configPath);
    const { [name]: _removed, ...contexts } = current.contexts;
    const next = { ...current, contexts };
    if (next.currentContext === name) delete next.currentContext;
    saveConfig(rt.configPath, next);
    rt.note(`deleted context ${name}`);
  });

  registerLogin(program, rt);
}

function registerLogin(program: Command, rt: Runtime): void {
  const login = program
    .command('login')
    .description("check the context's hub and token: prints who the token is and its role");
  outputOption(login);
  examples(login, 'fleetctl login', 'fleetctl --context prod login');
  login.action(async (opts: { output: OutputFormat }) => {
    const { name, context } = selectContext(rt.loadConfig(), rt.requestedContext, rt.configPath);
    const hub = connectHub(context, resolveToken(context, rt.env));
    const who = await whoami(hub);
    await printObject({ context: name, hub: hub.url, ...who }, opts.output, rt.out, (w) =>
      w.name
        ? `logged in to ${w.hub} as ${w.name} (${w.role}), context ${w.context}\n`
        : `token accepted by ${w.hub}\n`,
    );
  });
}

/** The token's name and role; a hub without /v1/whoami is asked for its sites instead, which proves the token. */
async function whoami(hub: ReturnType<typeof connectHub>): Promise<{ name?: string; role?: string }> {
  try {
    return (await unwrap(hub.raw.GET('/v1/whoami', {}))) as { name: string; role: string };
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404) throw err;
  }
  await unwrap(hub.api.GET('/v1/sites'));
  return {};
}

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig } from '@fleet/config';
import { HubConfig } from './config.js';

// What the hub's command-line tools (admin-cli, audit-cli) share: their arguments and the hub's config file, each
// refused with the usage and exit code 2; --help prints the usage and exits 0.

export function parseCliArgs<O extends NonNullable<ParseArgsConfig['options']>>(options: O, usage: string) {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { ...options, help: { type: 'boolean', short: 'h' } } });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${usage}`);
    process.exit(2);
  }
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    process.exit(0);
  }
  return parsed;
}

/** The hub's config from the file `pathOf` names (which may itself refuse: no --config and no FLEET_CONFIG). */
export function loadHubConfigOrExit(pathOf: () => string, usage: string): HubConfig {
  try {
    return loadConfig(HubConfig, pathOf());
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`${err.message}\n\n${usage}`);
    process.exit(2);
  }
}

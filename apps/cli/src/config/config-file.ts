import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { UsageError } from '../exit-codes.js';

/** One hub and how to authenticate to it. The token itself is never stored here: only where to read it. */
export interface FleetContext {
  /** The hub's base URL, e.g. https://fleet.example.com. */
  hub: string;
  /** A PEM file of CA certificates the hub's TLS certificate chains to (instead of the system's). */
  ca?: string;
  /** A file holding the API token (its first line). */
  tokenFile?: string;
  /** An environment variable holding the API token. */
  tokenEnv?: string;
}

export interface FleetConfig {
  currentContext?: string;
  contexts: Record<string, FleetContext>;
}

/** `FLEET_CONFIG`, else ~/.config/fleet/config.yaml (XDG_CONFIG_HOME respected). */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env['FLEET_CONFIG']) return env['FLEET_CONFIG'];
  const base = env['XDG_CONFIG_HOME'] || join(homedir(), '.config');
  return join(base, 'fleet', 'config.yaml');
}

const contextKeys = new Set(['hub', 'ca', 'tokenFile', 'tokenEnv']);

/** Reads the config file; a missing file is an empty config, a malformed one a usage error naming the problem. */
export function loadConfig(path: string): FleetConfig {
  if (!existsSync(path)) return { contexts: {} };
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, 'utf8')) ?? {};
  } catch (err) {
    throw new UsageError(`${path} is not valid YAML: ${(err as Error).message}`);
  }
  return validateConfig(raw, path);
}

export function validateConfig(raw: unknown, path: string): FleetConfig {
  const bad = (what: string) => new UsageError(`${path}: ${what}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('expected a mapping at the top');
  const { currentContext, contexts = {} } = raw as Record<string, unknown>;
  if (currentContext !== undefined && typeof currentContext !== 'string') throw bad('currentContext must be a string');
  if (typeof contexts !== 'object' || contexts === null || Array.isArray(contexts))
    throw bad('contexts must be a mapping of name to context');
  const out: FleetConfig = { contexts: {}, ...(currentContext ? { currentContext } : {}) };
  for (const [name, value] of Object.entries(contexts)) {
    if (typeof value !== 'object' || value === null) throw bad(`contexts.${name} must be a mapping`);
    const context = value as Record<string, unknown>;
    for (const [key, v] of Object.entries(context)) {
      if (!contextKeys.has(key)) throw bad(`contexts.${name}.${key} is not a context setting (${[...contextKeys]})`);
      if (typeof v !== 'string') throw bad(`contexts.${name}.${key} must be a string`);
    }
    if (!context['hub']) throw bad(`contexts.${name}.hub is required`);
    out.contexts[name] = context as unknown as FleetContext;
  }
  return out;
}

/** Writes the config atomically, readable only by its owner (it names where tokens live). */
export function saveConfig(path: string, config: FleetConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, stringify(config), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** The context a command uses: the one requested (--context or FLEET_CONTEXT), else the config's current one. */
export function selectContext(
  config: FleetConfig,
  requested: string | undefined,
  path: string,
): { name: string; context: FleetContext } {
  const name = requested || config.currentContext;
  if (!name)
    throw new UsageError(
      `no context selected and none current in ${path}; create one with ` +
        '`fleetctl config set-context NAME --hub URL --token-env VAR` (or --token-file FILE)',
    );
  const context = config.contexts[name];
  if (!context) {
    const known = Object.keys(config.contexts);
    throw new UsageError(`context ${name} is not in ${path}${known.length ? ` (known: ${known.join(', ')})` : ''}`);
  }
  return { name, context };
}

/** Merges settings into a context (creating it); `null` removes a setting. */
export function setContext(
  config: FleetConfig,
  name: string,
  settings: { [K in keyof FleetContext]?: string | null },
): FleetConfig {
  const merged: Record<string, string> = { ...config.contexts[name] };
  for (const [key, value] of Object.entries(settings)) {
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  if (!merged['hub']) throw new UsageError(`context ${name} needs --hub URL`);
  try {
    new URL(merged['hub']);
  } catch {
    throw new UsageError(`--hub ${merged['hub']} is not a URL`);
  }
  // A token is read from one place: setting one source replaces the other.
  if (settings.tokenFile) delete merged['tokenEnv'];
  if (settings.tokenEnv) delete merged['tokenFile'];
  return { ...config, contexts: { ...config.contexts, [name]: merged as unknown as FleetContext } };
}

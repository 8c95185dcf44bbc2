import { readFileSync } from 'node:fs';
import type { z } from 'zod';

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid configuration in ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The config file named by the first `--config <path>` on the command line, else FLEET_CONFIG. */
export function configPathFromArgs(argv: readonly string[] = process.argv, env = process.env): string {
  return configPathsFromArgs(argv, env)[0]!;
}

/** Every config file named by a `--config <path>` on the command line, in order, else FLEET_CONFIG. */
export function configPathsFromArgs(argv: readonly string[] = process.argv, env = process.env): string[] {
  const paths: string[] = [];
  for (const [i, arg] of argv.entries()) {
    if (arg !== '--config') continue;
    const path = argv[i + 1];
    if (!path || path.startsWith('--'))
      throw new ConfigError('(none)', ['a --config names no file: pass --config <file.json>']);
    paths.push(path);
  }
  if (paths.length) return paths;
  const path = env['FLEET_CONFIG'];
  if (!path) throw new ConfigError('(none)', ['no config file: pass --config <file.json> or set FLEET_CONFIG']);
  return [path];
}

/** Parses a JSON config file with a zod schema, listing every problem at once. */
export function loadConfig<S extends z.ZodType>(schema: S, file: string): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(file, [`cannot read JSON: ${(err as Error).message}`]);
  }
  return parseConfig(schema, raw, file);
}

export function parseConfig<S extends z.ZodType>(schema: S, raw: unknown, source = '(inline)'): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      source,
      parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`),
    );
  }
  return parsed.data;
}

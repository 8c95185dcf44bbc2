import { InvalidArgumentError, Option, type Command } from 'commander';
import { outputFormats, parseOutputFormat, type OutputFormat } from '../output/format.js';

/** `-o table|wide|json|yaml|jsonl|id`. */
export function outputOption(cmd: Command, defaultFormat: OutputFormat = 'table'): Command {
  return cmd.addOption(
    new Option('-o, --output <format>', `output format (${outputFormats.join('|')})`)
      .default(defaultFormat)
      .argParser((value) => {
        try {
          return parseOutputFormat(value);
        } catch (err) {
          throw new InvalidArgumentError((err as Error).message);
        }
      }),
  );
}

/** Appends a repeated option's values: `--site a --site b`, or `--site a,b`. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').filter(Boolean)];
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number');
  return n;
}

export function nonNegativeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number of seconds');
  return n;
}

/** "Examples:" after the options in --help. */
export function examples(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
}

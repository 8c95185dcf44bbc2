/**
 * `--help` or `-h`: prints the usage to stdout and exits 0 before anything else runs (no config is read,
 * nothing connects), so every command can be asked how it is used.
 */
export function exitOnHelp(usage: string, argv: readonly string[] = process.argv): void {
  if (!argv.slice(2).some((a) => a === '--help' || a === '-h')) return;
  process.stdout.write(usage.endsWith('\n') ? usage : `${usage}\n`);
  process.exit(0);
}

/** The usage of a long-running Fleet process that takes one JSON config file. */
export function serviceUsage(command: string, what: string, example: string): string {
  return `usage: ${command} --config <file.json>   (or FLEET_CONFIG=<file.json>)

${what}

The config file is validated at start-up, every problem listed; example: ${example}.
SIGTERM, SIGINT or SIGHUP drains and exits within the configured grace time; a second signal exits at once.
`;
}

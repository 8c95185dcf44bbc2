import type { Command } from 'commander';
import { connectHub, type Hub } from './api/hub.js';
import { configPath, loadConfig, selectContext, type FleetConfig } from './config/config-file.js';
import { resolveToken } from './config/token.js';
import { streamSink, type Sink } from './output/printer.js';

/** What every command reads: the global options, the config file, the hub of the selected context, and stdio. */
export class Runtime {
  readonly out: Sink;
  private hubOf: Hub | undefined;

  constructor(
    private readonly program: Command,
    readonly env: NodeJS.ProcessEnv = process.env,
    readonly stdout: NodeJS.WriteStream = process.stdout,
    readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {
    this.out = streamSink(stdout);
  }

  get configPath(): string {
    return configPath(this.env);
  }

  loadConfig(): FleetConfig {
    return loadConfig(this.configPath);
  }

  /** The name given with --context (or FLEET_CONTEXT), if any. */
  get requestedContext(): string | undefined {
    return (this.program.opts() as { context?: string }).context || this.env['FLEET_CONTEXT'] || undefined;
  }

  /** The hub of the selected context, with its token; made on first use so local commands need no context. */
  hub(): Hub {
    if (!this.hubOf) {
      const { context } = selectContext(this.loadConfig(), this.requestedContext, this.configPath);
      this.hubOf = connectHub(context, resolveToken(context, this.env));
    }
    return this.hubOf;
  }

  /** A line for people (progress, notes) on stderr, so stdout stays what scripts parse. */
  note(line: string): void {
    this.stderr.write(line + '\n');
  }

  /** Whether stderr is a terminal (progress bars redraw in place only there). */
  get interactive(): boolean {
    return Boolean(this.stderr.isTTY);
  }
}

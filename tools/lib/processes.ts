import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** A project process (hub, agent, satellite, simulator) run as `node --import tsx <entry> --config <file>`. */
export class ManagedProcess {
  child: ChildProcess | undefined;
  output = '';
  private readonly logFile: string;

  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly configFile: string,
    logDir: string,
    private readonly env: NodeJS.ProcessEnv = {},
  ) {
    mkdirSync(logDir, { recursive: true });
    this.logFile = join(logDir, `${name}.log`);
  }

  /** Starts the process and waits until its log shows `readyText`. */
  async start(readyText: string, timeoutMs = 60_000): Promise<void> {
    const log = createWriteStream(this.logFile, { flags: 'a' });
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, this.entry), '--config', this.configFile], {
      cwd: repoRoot,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const onData = (d: Buffer) => {
      this.output += d.toString();
      log.write(d);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', () => log.end());
    const started = this.output.length;
    const deadline = Date.now() + timeoutMs;
    while (!this.output.slice(started).includes(readyText)) {
      if (child.exitCode !== null) throw new Error(`${this.name} exited (${child.exitCode}) before ready:\n${this.output.slice(-3000)}`);
      if (Date.now() > deadline) throw new Error(`${this.name} not ready after ${timeoutMs} ms:\n${this.output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGKILL: a crash, with no chance to drain. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** SIGTERM and wait for a graceful exit; returns the exit code. */
  async stop(timeoutMs = 30_000): Promise<number | null> {
    return this.signal('SIGTERM', timeoutMs);
  }

  private async signal(sig: NodeJS.Signals, timeoutMs = 10_000): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill(sig);
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(t);
    return code;
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distEntry } from './build-entries.js';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * V8 flags every project process runs with (deploy/systemd and `pnpm bench` say the same). A heap that starts
 * at 64 MB: below that, a process moving hundreds of MiB/s through buffers (the satellite's SFTP uploads, the
 * simulated switches receiving them) has less old-generation headroom than its young generation's size, and
 * V8 then starts a full mark-compact every few megabytes (docs/switch-transfers.md).
 */
export const nodeFlags = ['--initial-heap-size=64'];

/**
 * How a process runs: `tsx` compiles its TypeScript sources at start (development, the tests by default); `dist` runs
 * what `pnpm build` compiled with plain node, as production does (stack traces mapped back to the sources).
 */
export type ProcessMode = 'tsx' | 'dist';

/** FLEET_PROCESS_MODE=dist runs every process of the tests or the dev stack from the build. */
export function defaultProcessMode(): ProcessMode {
  const mode = process.env['FLEET_PROCESS_MODE'] ?? 'tsx';
  if (mode !== 'tsx' && mode !== 'dist') throw new Error(`FLEET_PROCESS_MODE must be tsx or dist, not ${mode}`);
  return mode;
}

/** The node arguments that run a source entry (apps/hub/src/main.ts) in a mode. */
export function entryArgs(entry: string, mode: ProcessMode): string[] {
  if (mode === 'tsx') return ['--import', 'tsx', join(repoRoot, entry)];
  const compiled = join(repoRoot, distEntry(entry));
  if (!existsSync(compiled)) throw new Error(`${compiled} does not exist: run pnpm build`);
  return ['--enable-source-maps', compiled];
}

/** Children still running; they are signalled when this process exits, however it exits short of SIGKILL. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) signalGroup(child, 'SIGTERM');
});

/** The child and anything it started: each child leads its own process group. */
function signalGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, sig);
  } catch {
    // already gone
  }
}

/**
 * A project process (hub, agent, satellite, simulator) run as `node --import tsx <entry> --config <file>`, or from
 * the build as `node <package>/dist/<entry>.js --config <file>` (ProcessMode).
 * Its stdout and stderr go straight to `<logDir>/<name>.log`, never through a pipe to this process, so its
 * logs (its shutdown line included) outlive this process and a parent that stops reading cannot block it.
 * It runs in its own process group (a Ctrl-C reaches only the parent, which stops the children in order)
 * with FLEET_EXIT_WITH_PARENT=1, so it stops by itself when this process dies, even by SIGKILL.
 */
export class ManagedProcess {
  child: ChildProcess | undefined;
  readonly logFile: string;
  private logged = '';
  private readOffset: number;

  constructor(
    readonly name: string,
    readonly entry: string,
    /** One config file, or several for a process that reads each (a satellite serving several sites). */
    private readonly configFile: string | readonly string[],
    logDir: string,
    private readonly env: NodeJS.ProcessEnv = {},
    readonly mode: ProcessMode = defaultProcessMode(),
  ) {
    mkdirSync(logDir, { recursive: true });
    this.logFile = join(logDir, `${name}.log`);
    // Lines a previous run left in the file are not this process's output.
    this.readOffset = fileSize(this.logFile);
  }

  /** Everything the process (across restarts) wrote since this object was made. */
  get output(): string {
    const fd = openSync(this.logFile, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size > this.readOffset) {
        const buf = Buffer.alloc(size - this.readOffset);
        readSync(fd, buf, 0, buf.length, this.readOffset);
        this.readOffset = size;
        this.logged += buf.toString();
      }
    } finally {
      closeSync(fd);
    }
    return this.logged;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the process and waits until its log shows `readyText`. */
  async start(readyText: string, timeoutMs = 60_000): Promise<void> {
    const log = openSync(this.logFile, 'a');
    const started = this.output.length;
    const child = spawn(
      process.execPath,
      [
        // FLEET_CPU_PROF_DIR: each process writes a CPU profile there when it exits (where a bench's time goes).
        ...(process.env['FLEET_CPU_PROF_DIR']
          ? ['--cpu-prof', `--cpu-prof-dir=${process.env['FLEET_CPU_PROF_DIR']}`]
          : []),
        ...nodeFlags,
        ...entryArgs(this.entry, this.mode),
        ...[this.configFile].flat().flatMap((file) => ['--config', file]),
      ],
      {
        cwd: repoRoot,
        env: { ...process.env, FLEET_EXIT_WITH_PARENT: '1', ...this.env },
        stdio: ['ignore', log, log],
        detached: true,
      },
    );
    closeSync(log); // the child holds its own copy
    this.child = child;
    running.add(child);
    child.once('exit', () => running.delete(child));
    const deadline = Date.now() + timeoutMs;
    while (!this.output.slice(started).includes(readyText)) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `${this.name} exited (${child.exitCode ?? child.signalCode}) before ready:\n${this.output.slice(-3000)}`,
        );
      }
      if (Date.now() > deadline)
        throw new Error(`${this.name} not ready after ${timeoutMs} ms:\n${this.output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGKILL: a crash, with no chance to drain. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** SIGTERM and wait for a graceful exit (SIGKILL after timeoutMs); returns the exit code. */
  async stop(timeoutMs = 30_000): Promise<number | null> {
    return this.signal('SIGTERM', timeoutMs);
  }

  private async signal(sig: NodeJS.Signals, timeoutMs = 10_000): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    signalGroup(child, sig);
    const t = setTimeout(() => signalGroup(child, 'SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(t);
    return code;
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

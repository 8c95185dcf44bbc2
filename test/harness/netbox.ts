import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@fleet/temporal';
import { repoRoot } from '../../tools/lib/processes.js';

const run = promisify(execFile);

export interface NetboxServer {
  url: string;
  token: string;
  port: number;
  db: string;
  /** Stops the server; the database is kept unless `drop`. */
  stop(drop?: boolean): Promise<void>;
  /** Starts it again on the same port and database. */
  restart(): Promise<void>;
}

/**
 * A real NetBox (PyPI netbox, tools/netbox) on a free loopback port, serving a fresh
 * database cloned from the migrated template (well under a second).
 */
export async function startNetbox(): Promise<NetboxServer> {
  const port = await freePort();
  const db = `netbox_t_${randomBytes(4).toString('hex')}`;
  const start = async () => {
    const { stdout } = await run(
      'bash',
      [join(repoRoot, 'tools/netbox/start.sh'), '--port', String(port), '--db', db],
      { cwd: repoRoot, timeout: 600_000, maxBuffer: 1 << 20 },
    );
    return JSON.parse(stdout.trim().split('\n').pop()!) as { url: string; token: string };
  };
  const info = await start();
  return {
    url: info.url,
    token: info.token,
    port,
    db,
    stop: async (drop = false) => {
      await run(
        'bash',
        [join(repoRoot, 'tools/netbox/stop.sh'), '--port', String(port), ...(drop ? ['--drop-db'] : [])],
        { cwd: repoRoot, timeout: 60_000 },
      );
    },
    restart: async () => {
      await start();
    },
  };
}

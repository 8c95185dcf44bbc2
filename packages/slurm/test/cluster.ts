import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SlurmClient, tokenFromFile } from '../src/index.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../..', import.meta.url));
const startScript = join(repo, 'tools/slurm/start.sh');
const stopScript = join(repo, 'tools/slurm/stop.sh');

/** What tools/slurm/start.sh writes to FOLDER/cluster.json. */
interface ClusterFile {
  folder: string;
  url: string;
  user: string;
  tokenFile: string;
  slurmConf: string;
  partition: string;
  jobsDir: string;
}

export interface TestCluster extends ClusterFile {
  client: SlurmClient;
  /** scontrol against this cluster, e.g. `scontrol('update', 'PartitionName=burnin', 'State=DOWN')`. */
  scontrol(...args: string[]): string;
  stop(): Promise<void>;
}

/** Fails (never skips) when the daemons are missing, saying how to install them. */
export function assertSlurmInstalled(): void {
  const missing = ['munged', 'slurmctld', 'slurmd', 'slurmrestd', 'scontrol'].filter((cmd) => {
    try {
      execFileSync('bash', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0)
    throw new Error(
      `SLURM is not installed (missing ${missing.join(', ')}): run bash tools/slurm/install.sh ` +
        '(tools/install.sh runs it too)',
    );
}

/**
 * Starts a project-local single-node cluster in a fresh temp folder with tools/slurm/start.sh, for one test file
 * (call in `before`, and `stop()` in `after`). About 1-2 s.
 */
export async function startTestCluster(): Promise<TestCluster> {
  assertSlurmInstalled();
  let folder: string;
  for (let attempt = 1; ; attempt++) {
    folder = mkdtempSync(join(tmpdir(), 'fleet-slurm-'));
    // mkdtemp makes the folder 0700; slurmrestd runs as another user and must read the config in it.
    chmodSync(folder, 0o755);
    try {
      await run('bash', [startScript, folder], { timeout: 120_000 });
      break;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      const why = e.stderr || e.message;
      // start.sh picks free ports, and on a busy machine another process can take one before a daemon binds it
      // (the script has stopped what it started): a fresh start picks again.
      if (attempt < 3 && why.includes('Address already in use')) {
        rmSync(folder, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
        continue;
      }
      throw new Error(`tools/slurm/start.sh ${folder} failed: ${why}`, { cause: err });
    }
  }
  const info = JSON.parse(readFileSync(join(folder, 'cluster.json'), 'utf8')) as ClusterFile;
  const client = new SlurmClient({ url: info.url, user: info.user, token: tokenFromFile(info.tokenFile) });
  return {
    ...info,
    client,
    scontrol: (...args) =>
      execFileSync('scontrol', args, { env: { ...process.env, SLURM_CONF: info.slurmConf }, encoding: 'utf8' }),
    stop: async () => {
      await client.close();
      await run('bash', [stopScript, folder], { timeout: 60_000 });
      // Retried: a daemon's last state file may land while the folder is being removed.
      rmSync(folder, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
}

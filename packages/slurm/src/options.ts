import { readFile } from 'node:fs/promises';
import type { Dispatcher } from 'undici';

/** The JWT for X-SLURM-USER-TOKEN, or a function asked before each request (so a renewed token is picked up). */
export type SlurmToken = string | (() => string | Promise<string>);

export interface SlurmClientOptions {
  /** slurmrestd's address, e.g. http://127.0.0.1:6820; the /slurm/v0.0.38 paths are added. */
  url: string;
  /** X-SLURM-USER-NAME: the user the token was issued for (slurmrestd refuses a token alone). */
  user: string;
  token: SlurmToken;
  /** Whole-request budget. Default 30 s (slurmrestd takes about 9 s to give up on an unreachable slurmctld). */
  requestTimeoutMs?: number;
  /** Bring your own dispatcher (tests, proxies); the client then does not own or close it. */
  dispatcher?: Dispatcher;
}

export const defaults = {
  requestTimeoutMs: 30_000,
  /** slurmrestd refuses a submit without an environment; jobs get this one unless the caller gives theirs. */
  environment: { PATH: '/usr/local/bin:/usr/bin:/bin' } as Readonly<Record<string, string>>,
  followIntervalMs: 1_000,
} as const;

export const API_PATH = '/slurm/v0.0.38';

/** A token read from a file (as `scontrol token` wrote it, with or without `SLURM_JWT=`) at each request. */
export function tokenFromFile(path: string): () => Promise<string> {
  return async () => {
    const text = (await readFile(path, 'utf8')).trim();
    return text.startsWith('SLURM_JWT=') ? text.slice('SLURM_JWT='.length) : text;
  };
}

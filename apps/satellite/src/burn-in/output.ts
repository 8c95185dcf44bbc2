import { open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobOutput } from './verdicts.js';

export interface ReadOutputOptions {
  /** Only the end of a larger file is read: the result line is the script's last. Default 1 MiB. */
  maxBytes?: number;
  /** How long a missing file is waited for: a shared filesystem may show it late. Default 5 s. */
  waitMs?: number;
}

/** The end of a job's output file, or why it could not be read (never throws). */
export async function readJobOutput(path: string, opts: ReadOutputOptions = {}): Promise<JobOutput> {
  const maxBytes = opts.maxBytes ?? 1024 * 1024;
  const until = Date.now() + (opts.waitMs ?? 5_000);
  for (;;) {
    try {
      const file = await open(path, 'r');
      try {
        const { size } = await file.stat();
        const length = Math.min(size, maxBytes);
        const buffer = Buffer.alloc(length);
        await file.read(buffer, 0, length, size - length);
        return { ok: true, text: buffer.toString('utf8') };
      } finally {
        await file.close();
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && Date.now() < until) {
        await sleep(250);
        continue;
      }
      return { ok: false, message: `cannot read the job's output ${path}: ${(err as Error).message}` };
    }
  }
}

/** Where a job's output path (as the SLURM node wrote it) is on this machine. */
export function localOutputPath(path: string, outputDir: string, localOutputDir: string | undefined): string {
  const dir = outputDir.replace(/\/+$/, '');
  if (!localOutputDir || !path.startsWith(`${dir}/`)) return path;
  return `${localOutputDir.replace(/\/+$/, '')}${path.slice(dir.length)}`;
}

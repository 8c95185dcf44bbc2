import { readFileSync } from 'node:fs';

/** A process's peak resident set so far (VmHWM, the kernel's high-water mark), MiB. */
export function peakRssMiB(pid: number): number {
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number((Number(kb) / 1024).toFixed(1));
}

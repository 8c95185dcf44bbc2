import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second for /proc/<pid>/stat times (USER_HZ, 100 on every Linux this runs on). */
const TICKS_PER_S = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuS: number;
}

/** Every live process's parent, command name and user + system CPU seconds. */
function readProcs(): ProcStat[] {
  const procs: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command sits in parentheses and may hold spaces: the fields after it are split on their own.
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.push({
        pid: Number(entry),
        ppid: Number(fields[1]),
        comm,
        cpuS: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S,
      });
    } catch {
      // gone between the listing and the read
    }
  }
  return procs;
}

/** The CPU seconds of a process and all its descendants. */
function treeCpu(procs: ProcStat[], root: number): number {
  let total = 0;
  const queue = [root];
  while (queue.length) {
    const pid = queue.pop()!;
    for (const p of procs) {
      if (p.pid === pid) total += p.cpuS;
      if (p.ppid === pid) queue.push(p.pid);
    }
  }
  return total;
}

/**
 * A pid with its descendants (a CLI wrapper and the server it runs), a pid alone (a bench that started the others), or
 * every process with a command name (e.g. all of Postgres's backends).
 */
export type CpuSources = Record<string, number | { pid: number } | { comm: string }>;

/**
 * CPU seconds per named source (a pid, or every process with a command name) between `start()` and `stop()`: where a
 * run's CPU went across the stack's processes, which on a small machine is where its latency goes. Postgres backends
 * that start during the run are counted whole, those that exit during it lose their share: the figure is a floor.
 */
export function processCpu(sources: CpuSources) {
  const read = () => {
    const procs = readProcs();
    const out: Record<string, number> = {};
    for (const [name, src] of Object.entries(sources))
      out[name] =
        typeof src === 'number'
          ? treeCpu(procs, src)
          : 'pid' in src
            ? (procs.find((p) => p.pid === src.pid)?.cpuS ?? 0)
            : procs.filter((p) => p.comm === src.comm).reduce((sum, p) => sum + p.cpuS, 0);
    return out;
  };
  const before = read();
  return {
    stop(): Record<string, number> {
      const after = read();
      return Object.fromEntries(
        Object.keys(sources).map((k) => [k, Number(Math.max(0, after[k]! - before[k]!).toFixed(2))]),
      );
    },
  };
}

import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second for /proc/<pid>/stat times (USER_HZ, 100 on every Linux this runs on). */
const TICKS_PER_S = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuS: number;
  /** Start time in ticks since boot: with the pid, names one process even when its pid is reused. */
  startTicks: string;
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
        startTicks: fields[19]!,
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
 * run's CPU went across the stack's processes, which on a small machine is where its latency goes. Processes named by
 * command (Postgres's backends, which come and go with connection pools) are read once a second, each counted from
 * its first reading (whole, if it started during the run) to its last: one that exits loses at most its last second.
 */
export function processCpu(sources: CpuSources) {
  const byComm = Object.entries(sources).flatMap(([name, src]) =>
    typeof src === 'object' && 'comm' in src ? [{ name, comm: src.comm }] : [],
  );
  // Per command name: each process's CPU when first and last seen.
  const seen = new Map<string, Map<string, { first: number; last: number }>>(byComm.map((c) => [c.comm, new Map()]));
  let initial = true;
  const sample = (procs: ProcStat[]) => {
    for (const p of procs) {
      const pids = seen.get(p.comm);
      if (!pids) continue;
      const key = `${p.pid}/${p.startTicks}`;
      const known = pids.get(key);
      if (known) known.last = p.cpuS;
      else pids.set(key, { first: initial ? p.cpuS : 0, last: p.cpuS });
    }
    initial = false;
  };
  const tree = (procs: ProcStat[]) => {
    const out: Record<string, number> = {};
    for (const [name, src] of Object.entries(sources))
      if (typeof src === 'number') out[name] = treeCpu(procs, src);
      else if ('pid' in src) out[name] = procs.find((p) => p.pid === src.pid)?.cpuS ?? 0;
    return out;
  };
  const first = readProcs();
  sample(first);
  const before = tree(first);
  const timer = byComm.length ? setInterval(() => sample(readProcs()), 1000) : undefined;
  timer?.unref();
  return {
    stop(): Record<string, number> {
      clearInterval(timer);
      const procs = readProcs();
      sample(procs);
      const after = tree(procs);
      for (const { name, comm } of byComm)
        after[name] = [...seen.get(comm)!.values()].reduce((sum, p) => sum + p.last - p.first, 0);
      return Object.fromEntries(
        Object.keys(sources).map((k) => [k, Number(Math.max(0, after[k]! - (before[k] ?? 0)).toFixed(2))]),
      );
    },
  };
}

import type { Logger } from 'pino';

/** Set by a parent (tools/lib/processes.ts) that wants its children to stop when it dies, even by SIGKILL. */
export const exitWithParentEnv = 'FLEET_EXIT_WITH_PARENT';

export interface ShutdownOptions {
  /** Names the log lines: "<name> stopping", "<name> stopped". */
  name: string;
  log: Logger;
  /** Seconds drain() may take; past them the process exits with code 1 whatever drain waits on. */
  graceS: number;
  /** Stops taking work, finishes (or hands back) what runs, closes servers and pools. */
  drain: () => Promise<void>;
  /** How often the parent is checked when FLEET_EXIT_WITH_PARENT=1. */
  parentPollMs?: number;
}

export interface Shutdown {
  /** Starts the shutdown (once); resolves never: the process exits. */
  begin(reason: string): Promise<void>;
}

/**
 * The one way a Fleet process stops. SIGTERM, SIGINT or SIGHUP (or, with FLEET_EXIT_WITH_PARENT=1, the death of
 * the process that started it) logs "<name> stopping", runs drain, logs "<name> stopped" and exits 0. A hard-exit
 * timer ends the process with code 1 after graceS whatever drain still waits on (a Postgres that stopped answering,
 * a pool client that is never released, a socket that never closes), and a second signal ends it at once. Log lines
 * never block the exit: pino writes synchronously and drops its output when stdout is a closed pipe.
 */
export function handleShutdown(opts: ShutdownOptions): Shutdown {
  let started: Promise<void> | undefined;
  const exit = (code: number): never => process.exit(code);

  const begin = (reason: string): Promise<void> => {
    if (started) return started;
    opts.log.info({ reason, graceS: opts.graceS }, `${opts.name} stopping`);
    const hardExit = setTimeout(() => {
      opts.log.error({ reason, graceS: opts.graceS }, `${opts.name} did not stop within ${opts.graceS}s; exiting`);
      exit(1);
    }, opts.graceS * 1000);
    started = opts.drain().then(
      () => {
        clearTimeout(hardExit);
        opts.log.info({ reason }, `${opts.name} stopped`);
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(hardExit);
        opts.log.error(
          { reason, err: err instanceof Error ? err.message : String(err) },
          `${opts.name} stopped with an error`,
        );
        exit(1);
      },
    );
    return started;
  };

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (!started) {
        void begin(signal);
        return;
      }
      opts.log.warn({ signal }, `${opts.name}: second signal while stopping; exiting now`);
      exit(1);
    });
  }

  if (process.env[exitWithParentEnv] === '1') {
    // Linux reparents an orphan (to init or a subreaper): a changed ppid means the parent is gone.
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(watch);
        void begin(`parent ${parent} exited`);
      }
    }, opts.parentPollMs ?? 500);
    watch.unref();
  }
  return { begin };
}

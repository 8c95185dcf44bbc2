import type { Logger } from 'pino';
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Routes the Temporal SDK's own logs (worker, workflows, activities) into pino: to `forTaskQueue`'s logger for the task
 * queue a line names, when it has one (a process running several workers), else to `log`.
 */
export function installTemporalRuntime(
  log: Logger,
  forTaskQueue: (taskQueue: string) => Logger | undefined = () => undefined,
): void {
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => {
      const { message, level, meta } = entry;
      const taskQueue = meta?.['taskQueue'];
      const target = (typeof taskQueue === 'string' && forTaskQueue(taskQueue)) || log;
      target[levels[level]]({ ...meta, sdk: 'temporal' }, message);
    }),
  });
}

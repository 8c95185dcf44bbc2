import type { Logger } from 'pino';
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Routes the Temporal SDK's own logs (worker, workflows, activities) into pino. */
export function installTemporalRuntime(log: Logger): void {
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => {
      const { message, level, meta } = entry;
      log[levels[level]]({ ...meta, sdk: 'temporal' }, message);
    }),
  });
}

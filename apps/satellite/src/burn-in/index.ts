import type { Logger } from 'pino';
import { SlurmClient, tokenFromFile } from '@fleet/slurm';
import type { BurnInConfig } from '../config.js';
import { BurnInAdapter } from './adapter.js';
import { simulatedSite, type ScriptSite } from './scripts.js';

export { BurnInAdapter, type BurnInAdapterOptions, type BurnInProgress, type RunHooks } from './adapter.js';
export { BurnInInputError, planBurnIn, slurmJobName, type PlannedJob } from './plan.js';
export { simulatedSite, type RenderedJob, type ScriptSite } from './scripts.js';

/** The site's job scripts, as its config names them. */
function siteFor(config: BurnInConfig): ScriptSite {
  switch (config.site.kind) {
    case 'simulated':
      return simulatedSite({ simulatorUrl: config.site.simulatorUrl, jobPath: config.jobPath });
  }
}

/** The adapter for a satellite's `burnIn` config section, with its own slurmrestd client. */
export function burnInAdapterFromConfig(config: BurnInConfig, log: Logger): BurnInAdapter {
  const slurm = new SlurmClient({
    url: config.slurm.url,
    user: config.slurm.user,
    token: tokenFromFile(config.slurm.tokenFile),
    requestTimeoutMs: config.slurm.requestTimeoutMs,
  });
  return new BurnInAdapter({
    slurm,
    partition: config.slurm.partition,
    outputDir: config.outputDir,
    ...(config.localOutputDir ? { localOutputDir: config.localOutputDir } : {}),
    site: siteFor(config),
    timeLimitsMin: config.timeLimitsMin,
    startDeadlineS: config.startDeadlineS,
    overrunGraceS: config.overrunGraceS,
    pollIntervalMs: config.pollIntervalMs,
    log: log.child({ component: 'burn-in' }),
  });
}

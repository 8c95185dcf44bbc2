import { WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from 'pino';
import { listSites, removedSiteIds, type Db } from '@fleet/db';
import {
  observerMemoKey,
  observerSettingsSignalName,
  siteObserverWorkflowId,
  siteTaskQueue,
  type ObserveSiteInput,
} from '@fleet/domain';
import { observerSettingsFor, type ObservationConfig } from './config.js';
import type { AgentMetrics } from './metrics.js';
import type { TemporalClients } from './temporal-clients.js';

export interface ObserverDeps {
  db: Db;
  clients: TemporalClients;
  log: Logger;
  metrics: AgentMetrics;
  config: ObservationConfig;
}

export interface ObserverCheck {
  started: string[];
  updated: string[];
  stopped: string[];
}

const same = (a: ObserveSiteInput | undefined, b: ObserveSiteInput) =>
  !!a &&
  a.intervalS === b.intervalS &&
  a.concurrency === b.concurrency &&
  a.confirmations === b.confirmations &&
  a.runForS === b.runForS;

/**
 * Keeps one health observer workflow per site running with the settings of the config (docs/day2.md): one visibility
 * call lists the running observers with their settings (memo), then a start for each site without one, a settings
 * signal for each whose settings differ, a cancel for each the config turned off. The workflow ID is the site's, and
 * a start finds a running observer rather than start a second.
 */
export async function checkObservers(deps: ObserverDeps): Promise<ObserverCheck> {
  const { log, metrics } = deps;
  const client = deps.clients.any;
  const out: ObserverCheck = { started: [], updated: [], stopped: [] };
  const running = new Map<string, ObserveSiteInput | undefined>();
  metrics.temporalCalls.inc({ op: 'list' });
  for await (const wf of client.workflow.list({
    query: `WorkflowType = 'siteObserver' AND ExecutionStatus = 'Running'`,
  }))
    running.set(wf.workflowId, wf.memo?.[observerMemoKey] as ObserveSiteInput | undefined);
  const cancel = async (id: string) => {
    metrics.temporalCalls.inc({ op: 'cancel' });
    await client.workflow
      .getHandle(id)
      .cancel()
      .catch((err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      });
  };
  for (const site of await listSites(deps.db)) {
    const id = siteObserverWorkflowId(site.id);
    const settings = observerSettingsFor(deps.config, site.id);
    const slog = log.child({ siteId: site.id, workflowId: id });
    if (!settings) {
      if (!running.has(id)) continue;
      await cancel(id);
      slog.info('observer stopped: observation is off for the site');
      out.stopped.push(site.id);
      continue;
    }
    if (!running.has(id)) {
      metrics.temporalCalls.inc({ op: 'start' });
      await deps.clients.forSite(site.id).workflow.start('siteObserver', {
        workflowId: id,
        taskQueue: siteTaskQueue(site.id),
        args: [settings],
        memo: { [observerMemoKey]: settings },
        // Listed as not running a moment ago, yet started since (another agent): that one stands.
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      slog.info({ settings }, 'observer started');
      out.started.push(site.id);
    } else if (!same(running.get(id), settings)) {
      metrics.temporalCalls.inc({ op: 'signal' });
      await deps.clients.forSite(site.id).workflow.getHandle(id).signal(observerSettingsSignalName, settings);
      slog.info({ settings }, 'observer given new settings');
      out.updated.push(site.id);
    }
  }
  // A removed site's satellite is gone: its observer would wait on the task queue for ever.
  for (const siteId of await removedSiteIds(deps.db)) {
    const id = siteObserverWorkflowId(siteId);
    if (!running.has(id)) continue;
    await cancel(id);
    log.info({ siteId, workflowId: id }, 'observer stopped: the site was removed');
    out.stopped.push(siteId);
  }
  return out;
}

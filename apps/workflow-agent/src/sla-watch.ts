import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { errorText } from '@fleet/config';
import { openSlaBreachCounts, pendingDeliveries, watchSlas, type Db, type SlaBreach } from '@fleet/db';
import { judgeSla, type SlaPolicy } from '@fleet/domain';
import type { AgentMetrics } from './metrics.js';
import { slaPolicyOf, type SlaConfig } from './sla-config.js';
import { drainWebhookOutbox } from './webhook-outbox.js';
import { readWebhookSecret } from './webhook-sender.js';

export interface SlaWatchDeps {
  db: Db;
  log: Logger;
  metrics: AgentMetrics;
  config: SlaConfig;
  dispatcher?: Dispatcher;
  shouldStop?: () => boolean;
}

/** Breaches logged one by one per pass; past this, a count (a first pass over an old fleet can find thousands). */
const loggedPerPass = 50;
/** The shortest sleep between two cycles, so a failing query does not spin. */
const minSleepMs = 100;

/**
 * The agent's SLA loop body (docs/sla.md): a watch pass every intervalS (breaches found and resolved in Postgres, their
 * webhook deliveries in the outbox, the gauges refreshed), and after it the outbox's due deliveries. run() answers how
 * long to sleep: until the next pass or the next retry, whichever is first.
 */
export class SlaWatch {
  private readonly policy: SlaPolicy;
  private nextPassAt = 0;
  private secretsChecked = false;

  constructor(private readonly deps: SlaWatchDeps) {
    this.policy = slaPolicyOf(deps.config);
  }

  async run(): Promise<number> {
    const { config, log } = this.deps;
    if (!this.secretsChecked) {
      this.secretsChecked = true;
      await this.checkSecrets();
    }
    if (Date.now() >= this.nextPassAt) {
      this.nextPassAt = Date.now() + config.intervalS * 1000;
      try {
        await this.pass();
      } catch (err) {
        log.warn({ err: errorText(err) }, 'SLA watch pass failed; will retry');
      }
    }
    let nextDueAt: Date | undefined;
    try {
      await drainWebhookOutbox(this.deps);
      const pending = await pendingDeliveries(this.deps.db);
      this.deps.metrics.webhookPending.reset();
      for (const w of config.webhooks) this.deps.metrics.webhookPending.set({ webhook: w.name }, 0);
      for (const [webhook, n] of pending.byWebhook) this.deps.metrics.webhookPending.set({ webhook }, n);
      nextDueAt = pending.nextDueAt;
    } catch (err) {
      log.warn({ err: errorText(err) }, 'webhook outbox pass failed; will retry');
    }
    const wakeAt = Math.min(this.nextPassAt, nextDueAt?.getTime() ?? Infinity);
    return Math.max(minSleepMs, wakeAt - Date.now());
  }

  /** Says at start-up which webhooks cannot sign yet (their deliveries wait and retry until the file is there). */
  private async checkSecrets(): Promise<void> {
    for (const w of this.deps.config.webhooks)
      await readWebhookSecret(w.secretFile).catch((err: Error) =>
        this.deps.log.error({ webhook: w.name, err: err.message }, 'webhook secret unusable'),
      );
  }

  /** One watch pass; what it found. */
  async pass(): Promise<{ opened: SlaBreach[]; resolved: SlaBreach[] }> {
    const { db, log, metrics, config } = this.deps;
    const end = metrics.slaWatchSeconds.startTimer();
    const result = await watchSlas(db, this.policy, config.webhooks);
    end();
    if (!result.ran) {
      log.debug('another agent is watching the SLAs');
      return result;
    }
    for (const b of result.opened) metrics.slaBreaches.inc({ object_type: b.objectType, sla_key: b.slaKey });
    for (const b of result.resolved) metrics.slaResolved.inc({ object_type: b.objectType, sla_key: b.slaKey });
    const counts = await openSlaBreachCounts(db);
    metrics.slaOpenBreaches.reset();
    for (const c of counts) metrics.slaOpenBreaches.set({ object_type: c.objectType, sla_key: c.slaKey }, c.count);
    this.logChanges(result.opened, result.resolved, result.enqueued);
    return result;
  }

  private logChanges(opened: SlaBreach[], resolved: SlaBreach[], enqueued: number): void {
    const { log } = this.deps;
    const fields = (b: SlaBreach) => ({
      breach: b.id,
      objectType: b.objectType,
      objectId: b.objectId,
      objectName: b.objectName,
      siteId: b.siteId,
      slaKey: b.slaKey,
      since: b.since.toISOString(),
      limitS: b.limitS,
    });
    for (const b of opened.slice(0, loggedPerPass))
      log.warn(
        { ...fields(b), overdueS: Math.floor(judgeSla(b.limitS, b.since, b.breachedAt)!.overdueS) },
        'SLA breached',
      );
    for (const b of resolved.slice(0, loggedPerPass))
      log.info({ ...fields(b), resolution: b.resolution }, 'SLA resolved');
    if (opened.length > loggedPerPass || resolved.length > loggedPerPass)
      log.warn({ opened: opened.length, resolved: resolved.length }, 'SLA breaches changed (not all logged)');
    if (enqueued) log.info({ deliveries: enqueued }, 'webhook deliveries queued');
  }
}

import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import {
  failUnconfiguredDeliveries,
  leaseDueDeliveries,
  markDeliveryDelivered,
  markDeliveryFailedAttempt,
  type Db,
  type WebhookDelivery,
} from '@fleet/db';
import { backoffMs } from '@fleet/http';
import type { AgentMetrics } from './metrics.js';
import type { SlaConfig, WebhookConfig } from './sla-config.js';
import { sendWebhook } from './webhook-sender.js';

export interface OutboxDeps {
  db: Db;
  log: Logger;
  metrics: AgentMetrics;
  config: Pick<SlaConfig, 'webhooks' | 'delivery'>;
  dispatcher?: Dispatcher;
  /** Asked between batches: a shutdown leaves the rest due for the next start. */
  shouldStop?: () => boolean;
}

/**
 * Sends the outbox's due deliveries, a leased batch at a time, until none is due: a 2xx delivers one, anything else
 * (an error status, a timeout, a refused connection, an unreadable secret) is retried with backoff until
 * delivery.maxAttempts, then fails for good. Returns the deliveries attempted.
 */
export async function drainWebhookOutbox(deps: OutboxDeps): Promise<number> {
  const { db, config } = deps;
  const byName = new Map(config.webhooks.map((w) => [w.name, w]));
  const failed = await failUnconfiguredDeliveries(db, [...byName.keys()]);
  if (failed) deps.log.warn({ deliveries: failed }, 'deliveries to webhooks no longer configured failed');
  let attempted = 0;
  for (;;) {
    const batch = await leaseDueDeliveries(db, [...byName.keys()], config.delivery.batchSize, config.delivery.leaseS);
    await eachLimited(batch, config.delivery.concurrency, (d) => attempt(deps, byName.get(d.webhook)!, d));
    attempted += batch.length;
    if (batch.length < config.delivery.batchSize || deps.shouldStop?.()) return attempted;
  }
}

async function attempt(deps: OutboxDeps, webhook: WebhookConfig, d: WebhookDelivery): Promise<void> {
  const { db, log, metrics, config } = deps;
  const end = metrics.webhookAttemptSeconds.startTimer({ webhook: webhook.name });
  const outcome = await sendWebhook(webhook, d, deps.dispatcher ? { dispatcher: deps.dispatcher } : {});
  end();
  const fields = { webhook: webhook.name, delivery: d.id, event: d.event, breach: d.breachId, attempt: d.attempts };
  if (outcome.delivered) {
    await markDeliveryDelivered(db, d.id, outcome.status!);
    metrics.webhookDeliveries.inc({ webhook: webhook.name, outcome: 'delivered' });
    log.info({ ...fields, status: outcome.status }, 'webhook delivered');
    return;
  }
  const { maxAttempts, retryBaseS, retryMaxS } = config.delivery;
  const giveUp = d.attempts >= maxAttempts;
  const retryInS = giveUp
    ? undefined
    : Math.min(
        retryMaxS,
        Math.max(backoffMs(d.attempts, retryBaseS * 1000, retryMaxS * 1000) / 1000, outcome.retryAfterS ?? 0),
      );
  await markDeliveryFailedAttempt(db, d.id, { status: outcome.status, error: outcome.error }, retryInS);
  metrics.webhookDeliveries.inc({ webhook: webhook.name, outcome: giveUp ? 'failed' : 'retry' });
  const what = { ...fields, status: outcome.status, err: outcome.error };
  if (giveUp) log.error(what, `webhook delivery failed for good after ${d.attempts} attempts`);
  else log.warn({ ...what, retryInS: Math.round(retryInS! * 10) / 10 }, 'webhook attempt failed; will retry');
}

/** Runs `fn` over `items`, at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ObserverEvents } from '../activities/observe.js';
import type { EventsConfig } from '../config.js';
import { EventListener } from './event-listener.js';
import { EventSubscriptions } from './event-subscriptions.js';

/**
 * The observer's push events from the satellite's `events` config: the listener, the subscriptions and their metrics.
 * The push token is drawn here, once per process, and lives only in memory and in the BMCs' subscriptions: a restart
 * draws a new one and replaces every subscription of ours as the observer reaches its device.
 */
export async function startObserverEvents(
  config: EventsConfig,
  siteId: string,
  log: Logger,
  registry: Registry,
): Promise<ObserverEvents & { close(): Promise<void> }> {
  const pushes = new Counter({
    name: 'fleet_satellite_event_pushes_total',
    help: 'Redfish event pushes received, by outcome (accepted, unauthorized, too_large, malformed, unmapped, ...)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const token = randomBytes(32).toString('base64url');
  const subscriptions = new EventSubscriptions({
    destination: config.publicUrl,
    token,
    siteId,
    recheckMs: config.recheckS * 1000,
    log: log.child({ component: 'event-subscriptions' }),
  });
  new Gauge({
    name: 'fleet_satellite_event_subscribed_devices',
    help: 'Devices whose BMC pushes events to this satellite',
    registers: [registry],
    collect() {
      this.set(subscriptions.subscribed);
    },
  });
  const listener = await EventListener.start({
    host: config.listen.host,
    port: config.listen.port,
    token,
    maxBodyBytes: config.maxBodyBytes,
    ...(config.tls
      ? { tls: { cert: readFileSync(config.tls.certFile, 'utf8'), key: readFileSync(config.tls.keyFile, 'utf8') } }
      : {}),
    log: log.child({ component: 'event-listener' }),
    onPush: (outcome) => pushes.inc({ outcome }),
  });
  return { listener, subscriptions, debounceMs: config.debounceMs, close: () => listener.close() };
}

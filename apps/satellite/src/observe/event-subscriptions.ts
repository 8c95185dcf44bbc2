import type { Logger } from 'pino';
import type { BmcTarget } from '@fleet/domain';
import {
  createEventSubscription,
  deleteEventSubscription,
  eventSubscriptionsUri,
  listEventSubscriptions,
  RedfishError,
  type RedfishClient,
} from '@fleet/redfish';
import { eventTokenHeader } from './event-listener.js';

/** The event types that say a device's health or power changed; the rest (resources added, updated) do not. */
export const healthEventTypes = ['StatusChange', 'Alert'];

export interface EventSubscriptionsOptions {
  /** What BMCs are told to POST to: the listener as they reach it. */
  destination: string;
  token: string;
  siteId: string;
  /** How long a device's subscription (or its lack) is trusted before it is checked again. */
  recheckMs: number;
  log: Logger;
}

type DeviceState =
  | { kind: 'subscribed'; key: string; uri: string; checkedAt: number }
  | { kind: 'polled'; key: string; checkedAt: number };

/**
 * The satellite's push subscriptions, one per device whose BMC offers an EventService (docs/day2.md, "Event
 * subscriptions"). Ours are told apart by their Context, which names the site and the device: a restarted satellite
 * (whose token is new, and HttpHeaders read back empty) deletes what an earlier process left and subscribes afresh,
 * so a BMC never holds two of ours. A BMC that does not offer events, or refuses the subscription, is polled: that is
 * logged once, and asked again after `recheckMs`.
 */
export class EventSubscriptions {
  private readonly devices = new Map<string, DeviceState>();
  private readonly prefix: string;

  constructor(private readonly opts: EventSubscriptionsOptions) {
    this.prefix = `fleet-satellite/${opts.siteId}/`;
  }

  /** The Context of a device's subscription: not secret, it only says which device an event is about. */
  contextOf(deviceId: string): string {
    return `${this.prefix}${deviceId}`;
  }

  /** The device an event's Context names, if it is one of ours. */
  deviceOf(context: string): string | undefined {
    return context.startsWith(this.prefix) ? context.slice(this.prefix.length) || undefined : undefined;
  }

  /** Devices with a subscription of ours. */
  get subscribed(): number {
    let n = 0;
    for (const s of this.devices.values()) if (s.kind === 'subscribed') n++;
    return n;
  }

  isSubscribed(deviceId: string): boolean {
    return this.devices.get(deviceId)?.kind === 'subscribed';
  }

  /**
   * Makes sure the device has exactly one subscription of ours, unless it was seen to recently. `client` opens a
   * Redfish client for the device (closed here). Never throws: a device without one is simply polled.
   */
  async ensure(target: BmcTarget, client: () => Promise<RedfishClient>): Promise<void> {
    const key = `${target.bmcUrl} ${target.credentialRef}`;
    const known = this.devices.get(target.deviceId);
    if (known?.key === key && Date.now() - known.checkedAt < this.opts.recheckMs) return;
    const log = this.opts.log.child({ deviceId: target.deviceId, bmc: target.bmcUrl });
    let c: RedfishClient | undefined;
    try {
      c = await client();
      const uri = await this.subscribe(c, target.deviceId, known?.kind === 'subscribed' ? known.uri : undefined);
      if (!uri) {
        if (known?.kind !== 'polled') log.info('BMC offers no event service; polled');
        this.devices.set(target.deviceId, { kind: 'polled', key, checkedAt: Date.now() });
        return;
      }
      if (known?.kind !== 'subscribed' || known.uri !== uri) log.info({ subscription: uri }, 'subscribed to events');
      this.devices.set(target.deviceId, { kind: 'subscribed', key, uri, checkedAt: Date.now() });
    } catch (err) {
      if (known?.kind !== 'polled') {
        const cause = err instanceof RedfishError ? err.message : (err as Error).message;
        log.warn({ err: cause }, 'event subscription failed; polled');
      }
      this.devices.set(target.deviceId, { kind: 'polled', key, checkedAt: Date.now() });
    } finally {
      await c?.close().catch(() => undefined);
    }
  }

  /**
   * Forgets devices no longer observed (their subscription stays on the BMC until this or a later process replaces
   * it).
   */
  retain(current: Set<string>): void {
    for (const id of this.devices.keys()) if (!current.has(id)) this.devices.delete(id);
  }

  /**
   * Our subscription's URI: `mine` kept if the BMC still has it, every other one of ours deleted, one created if none
   * is left.
   */
  private async subscribe(c: RedfishClient, deviceId: string, mine: string | undefined): Promise<string | undefined> {
    const collection = await eventSubscriptionsUri(c);
    if (!collection) return undefined;
    const context = this.contextOf(deviceId);
    const ours = (await listEventSubscriptions(c, collection)).filter((s) => s.context === context);
    const keep = ours.find((s) => s.uri === mine && s.destination === this.opts.destination);
    for (const s of ours) if (s !== keep) await deleteEventSubscription(c, s.uri);
    if (keep) return keep.uri;
    return createEventSubscription(c, collection, {
      destination: this.opts.destination,
      context,
      eventTypes: healthEventTypes,
      httpHeaders: { [eventTokenHeader]: this.opts.token },
    });
  }
}

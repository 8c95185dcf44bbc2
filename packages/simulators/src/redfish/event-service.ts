import { redfishError } from './errors.js';
import { isObject, sleep } from './http-util.js';
import type { Health } from './tray-health.js';

/**
 * The BMC's EventService: subscriptions (EventDestination) that a client POSTs and DELETEs, and push delivery of
 * Redfish Event payloads to them (DSP0266 §12.1). Delivery is best effort and never holds up the BMC: each subscriber
 * has its own queue (bounded; the oldest undelivered event is dropped), each POST has a short timeout, and a failed
 * POST is retried DeliveryRetryAttempts times, DeliveryRetryIntervalSeconds apart (simulated time), then dropped.
 */
export const EVENT_SERVICE = '/redfish/v1/EventService';
export const SUBSCRIPTIONS = `${EVENT_SERVICE}/Subscriptions`;
export const SUBMIT_TEST_EVENT = `${EVENT_SERVICE}/Actions/EventService.SubmitTestEvent`;
export const RETRY_ATTEMPTS = 3;
export const RETRY_INTERVAL_S = 30;
/** One POST to a subscriber may take this long (real time: it models the network). */
const DELIVERY_TIMEOUT_MS = 3_000;
const MAX_SUBSCRIPTIONS = 20;
const MAX_PENDING = 100;

export const REGISTRY_PREFIXES = ['Base', 'ResourceEvent', 'TaskEvent', 'Update'] as const;
/** The event types a subscription may filter on (Event.EventType, less MetricReport: no telemetry service). */
const EVENT_TYPES = ['StatusChange', 'ResourceUpdated', 'ResourceAdded', 'ResourceRemoved', 'Alert', 'Other'];
export type EventType = 'StatusChange' | 'Alert';

/** What happened, before it is addressed to a subscriber. */
export interface RedfishEvent {
  eventType: EventType;
  severity: Health;
  messageId: string;
  message: string;
  messageArgs: string[];
  origin: string;
  /** The log entry that records it, when the BMC logged it. */
  logEntry?: string;
}

interface Subscription {
  id: string;
  destination: string;
  context: string;
  eventTypes?: string[];
  registryPrefixes?: string[];
  /** Sent with every POST; never shown again (EventDestination.HttpHeaders reads back empty). */
  headers: Record<string, string>;
  pending: object[];
  pumping: boolean;
  deleted: boolean;
}

export class EventService {
  private readonly subs = new Map<string, Subscription>();
  private nextId = 1;
  private nextEvent = 1;
  private readonly stopped = new AbortController();
  /** Deliveries that failed every attempt, and events dropped from a full queue; the admin API shows them. */
  readonly counts = { delivered: 0, failed: 0, dropped: 0 };

  /** `retryDelayMs`: DeliveryRetryIntervalSeconds on the BMC's simulated clock. */
  constructor(private readonly retryDelayMs: () => number) {}

  get ids(): string[] {
    return [...this.subs.keys()];
  }

  get size(): number {
    return this.subs.size;
  }

  /** Creates a subscription from a POST body; throws a Redfish 400 error for a body it cannot take. */
  subscribe(body: unknown): string {
    const s = parseSubscription(body);
    if (this.subs.size >= MAX_SUBSCRIPTIONS) throw redfishError(400, 'EventSubscriptionLimitExceeded');
    const id = String(this.nextId++);
    this.subs.set(id, { id, ...s, pending: [], pumping: false, deleted: false });
    return id;
  }

  unsubscribe(id: string): boolean {
    const s = this.subs.get(id);
    if (!s) return false;
    s.deleted = true;
    this.subs.delete(id);
    return true;
  }

  body(id: string): Record<string, unknown> | undefined {
    const s = this.subs.get(id);
    if (!s) return undefined;
    return {
      '@odata.id': `${SUBSCRIPTIONS}/${id}`,
      '@odata.type': '#EventDestination.v1_8_0.EventDestination',
      Id: id,
      Name: `Event Subscription ${id}`,
      Destination: s.destination,
      Context: s.context,
      Protocol: 'Redfish',
      SubscriptionType: 'RedfishEvent',
      EventFormatType: 'Event',
      ...(s.eventTypes ? { EventTypes: s.eventTypes } : {}),
      ...(s.registryPrefixes ? { RegistryPrefixes: s.registryPrefixes } : {}),
      HttpHeaders: [],
      Status: { State: 'Enabled', Health: 'OK' },
    };
  }

  /** Queues the event for every subscriber whose filters take it; returns at once. */
  publish(e: RedfishEvent): void {
    const eventId = String(this.nextEvent++);
    const timestamp = new Date().toISOString();
    for (const s of this.subs.values()) {
      if (!matches(s, e)) continue;
      s.pending.push(payload(s, e, eventId, timestamp));
      if (s.pending.length > MAX_PENDING) {
        s.pending.shift();
        this.counts.dropped++;
      }
      if (!s.pumping) void this.pump(s);
    }
  }

  stop(): void {
    this.stopped.abort();
  }

  private async pump(s: Subscription): Promise<void> {
    s.pumping = true;
    while (s.pending.length > 0 && !s.deleted && !this.stopped.signal.aborted) {
      const next = s.pending.shift()!;
      if (await this.deliver(s, next)) this.counts.delivered++;
      else this.counts.failed++;
    }
    s.pumping = false;
  }

  private async deliver(s: Subscription, body: object): Promise<boolean> {
    for (let attempt = 0; attempt <= RETRY_ATTEMPTS; attempt++) {
      if (attempt > 0) await sleep(this.retryDelayMs());
      if (s.deleted || this.stopped.signal.aborted) return false;
      try {
        const res = await fetch(s.destination, {
          method: 'POST',
          headers: { ...s.headers, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.any([AbortSignal.timeout(DELIVERY_TIMEOUT_MS), this.stopped.signal]),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) return true;
      } catch {
        // Refused, reset or timed out: retry like any other failed delivery.
      }
    }
    return false;
  }
}

function matches(s: Subscription, e: RedfishEvent): boolean {
  if (s.eventTypes && !s.eventTypes.includes(e.eventType)) return false;
  const prefix = e.messageId.split('.')[0]!;
  return !s.registryPrefixes || s.registryPrefixes.includes(prefix);
}

/** The Redfish Event a subscriber receives (Event v1_7: EventRecord with MessageSeverity, LogEntry). */
function payload(s: Subscription, e: RedfishEvent, eventId: string, timestamp: string): object {
  return {
    '@odata.type': '#Event.v1_7_0.Event',
    Id: eventId,
    Name: 'Event Log',
    Context: s.context,
    Events: [
      {
        EventType: e.eventType,
        EventId: eventId,
        EventTimestamp: timestamp,
        MemberId: '0',
        MessageSeverity: e.severity,
        Message: e.message,
        MessageId: e.messageId,
        MessageArgs: e.messageArgs,
        OriginOfCondition: { '@odata.id': e.origin },
        ...(e.logEntry ? { LogEntry: { '@odata.id': e.logEntry } } : {}),
      },
    ],
    'Events@odata.count': 1,
  };
}

const WRITABLE = new Set([
  'Destination',
  'Context',
  'Protocol',
  'SubscriptionType',
  'EventFormatType',
  'EventTypes',
  'RegistryPrefixes',
  'HttpHeaders',
]);

type Parsed = Pick<Subscription, 'destination' | 'context' | 'eventTypes' | 'registryPrefixes' | 'headers'>;

function parseSubscription(body: unknown): Parsed {
  if (body === undefined) throw redfishError(400, 'CreateFailedMissingReqProperties', ['Destination']);
  if (!isObject(body)) throw redfishError(400, 'MalformedJSON');
  for (const key of Object.keys(body))
    if (!key.startsWith('@') && !WRITABLE.has(key)) throw redfishError(400, 'PropertyUnknown', [key]);
  const { Destination: dest, Context: context = '' } = body;
  if (dest === undefined) throw redfishError(400, 'CreateFailedMissingReqProperties', ['Destination']);
  if (typeof dest !== 'string' || !isHttpUrl(dest))
    throw redfishError(400, 'PropertyValueFormatError', [JSON.stringify(dest), 'Destination']);
  if (typeof context !== 'string' || context.length > 256)
    throw redfishError(400, 'PropertyValueTypeError', [JSON.stringify(context), 'Context']);
  // RequiredOnCreate in EventDestination, as Destination is.
  if (body['Protocol'] === undefined) throw redfishError(400, 'CreateFailedMissingReqProperties', ['Protocol']);
  fixed(body, 'Protocol', 'Redfish');
  fixed(body, 'SubscriptionType', 'RedfishEvent');
  fixed(body, 'EventFormatType', 'Event');
  const eventTypes = stringList(body, 'EventTypes', EVENT_TYPES);
  const registryPrefixes = stringList(body, 'RegistryPrefixes', REGISTRY_PREFIXES);
  return {
    destination: dest,
    context,
    ...(eventTypes ? { eventTypes } : {}),
    ...(registryPrefixes ? { registryPrefixes } : {}),
    headers: headersOf(body['HttpHeaders']),
  };
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A property the service supports one value of. */
function fixed(body: Record<string, unknown>, key: string, only: string): void {
  if (body[key] !== undefined && body[key] !== only)
    throw redfishError(400, 'PropertyValueNotInList', [JSON.stringify(body[key]), key]);
}

/** An optional list filter; an empty list is no filter. */
function stringList(body: Record<string, unknown>, key: string, allowed: readonly string[]): string[] | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw redfishError(400, 'PropertyValueTypeError', [JSON.stringify(v), key]);
  const bad = v.find((x) => typeof x !== 'string' || !allowed.includes(x));
  if (bad !== undefined) throw redfishError(400, 'PropertyValueNotInList', [JSON.stringify(bad), key]);
  return v.length > 0 ? (v as string[]) : undefined;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** HttpHeaders: an array of objects whose values are strings, e.g. [{"Authorization": "Bearer …"}]. */
function headersOf(v: unknown): Record<string, string> {
  if (v === undefined) return {};
  const ok =
    Array.isArray(v) &&
    v.every((h) => isObject(h) && Object.entries(h).every(([k, x]) => HEADER_NAME.test(k) && typeof x === 'string'));
  if (!ok) throw redfishError(400, 'PropertyValueTypeError', [JSON.stringify(v), 'HttpHeaders']);
  return Object.assign({}, ...(v as Record<string, string>[]));
}

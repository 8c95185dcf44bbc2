import { headerValue } from '@fleet/http';
import type { RedfishClient } from './client.js';
import { linkOf, readCollection } from './discovery.js';
import { RedfishError } from './errors.js';

/** One EventDestination as the BMC lists it (its HttpHeaders are write-only: DSP0266 reads them back empty). */
export interface EventSubscription {
  uri: string;
  destination: string | undefined;
  context: string | undefined;
}

/** A push subscription (EventDestination, Protocol Redfish) to create. */
export interface EventSubscriptionRequest {
  destination: string;
  context: string;
  eventTypes: string[];
  /** Sent by the BMC with every push: the receiver's proof that the push is one it asked for. */
  httpHeaders: Record<string, string>;
}

interface EventServiceBody {
  ServiceEnabled?: unknown;
  Subscriptions?: unknown;
}

/**
 * The EventService's Subscriptions collection; undefined when the BMC offers no push events (no EventService link in
 * the service root, ServiceEnabled false, or no Subscriptions link).
 */
export async function eventSubscriptionsUri(client: RedfishClient): Promise<string | undefined> {
  const service = linkOf(await client.root(), 'EventService');
  if (!service) return undefined;
  const body = await client.get<EventServiceBody>(service);
  if (body.ServiceEnabled === false) return undefined;
  return linkOf(body, 'Subscriptions');
}

export async function listEventSubscriptions(client: RedfishClient, collection: string): Promise<EventSubscription[]> {
  const out: EventSubscription[] = [];
  for (const uri of (await readCollection(client, collection)).members) {
    const body = await client.get<{ Destination?: unknown; Context?: unknown }>(uri);
    out.push({
      uri,
      destination: typeof body.Destination === 'string' ? body.Destination : undefined,
      context: typeof body.Context === 'string' ? body.Context : undefined,
    });
  }
  return out;
}

/**
 * Creates a subscription and returns its URI (Location, else the body's @odata.id). A BMC's error may quote the body
 * it refused: the header values are cut out of the cause, so the error can be logged.
 */
export async function createEventSubscription(
  client: RedfishClient,
  collection: string,
  req: EventSubscriptionRequest,
): Promise<string> {
  const body = {
    Destination: req.destination,
    Context: req.context,
    Protocol: 'Redfish',
    EventTypes: req.eventTypes,
    HttpHeaders: [req.httpHeaders],
  };
  let res;
  try {
    res = await client.postForResponse(collection, body);
  } catch (err) {
    if (!(err instanceof RedfishError)) throw err;
    const cause = Object.values(req.httpHeaders).reduce((text, v) => text.split(v).join('(redacted)'), err.causeText);
    throw new RedfishError(err.code, err.bmc, err.uri, `subscription refused: ${cause}`, err.status);
  }
  const id = (res.body as { '@odata.id'?: unknown } | null | undefined)?.['@odata.id'];
  const uri = headerValue(res.headers, 'location') ?? (typeof id === 'string' ? id : undefined);
  if (!uri) throw new RedfishError('Protocol', client.bmc, collection, 'subscription created without a Location');
  return new URL(uri, 'http://bmc').pathname.replace(/\/+$/, '');
}

export async function deleteEventSubscription(client: RedfishClient, uri: string): Promise<void> {
  await client.delete(uri);
}

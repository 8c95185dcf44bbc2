import { testEvent } from '../announce.js';
import type { SimulatedBmc } from '../bmc.js';
import { notFound, redfishError } from '../errors.js';
import { entriesPath, logEntryBody } from '../event-log.js';
import { SUBSCRIPTIONS } from '../event-service.js';
import { isObject, type Reply } from '../http-util.js';
import { clearLogTarget } from '../profiles/logs.js';

/** Event log entries and subscriptions: the resources that come and go, so no profile tree holds them. */
export function eventResource(bmc: SimulatedBmc, path: string): Record<string, unknown> | undefined {
  if (path.startsWith(`${SUBSCRIPTIONS}/`)) return bmc.subscribers?.body(path.slice(SUBSCRIPTIONS.length + 1));
  for (const log of Object.values(bmc.profile.eventLogs)) {
    const prefix = `${entriesPath(log)}/`;
    if (!path.startsWith(prefix)) continue;
    const id = path.slice(prefix.length);
    const record = bmc.logRecords(log).find((r) => String(r.id) === id);
    return record ? logEntryBody(log, record) : undefined;
  }
  return undefined;
}

/** The LogService whose ClearLog action `path` is, if it is one. */
export function clearLogOf(bmc: SimulatedBmc, path: string): string | undefined {
  return Object.values(bmc.profile.eventLogs).find((log) => clearLogTarget(log) === path);
}

/** LogService.ClearLog: the log is emptied; entry ids keep counting. */
export function clearLog(bmc: SimulatedBmc, logService: string): Reply {
  bmc.eventLog(logService).clear();
  return { status: 204 };
}

/** POST to Subscriptions: 201 with the new EventDestination and its Location. */
export function createSubscription(bmc: SimulatedBmc, body: unknown): Reply {
  const id = bmc.events().subscribe(body);
  const location = `${SUBSCRIPTIONS}/${id}`;
  return { status: 201, body: bmc.subscribers!.body(id), headers: { Location: location } };
}

export function deleteSubscription(bmc: SimulatedBmc, path: string): Reply {
  if (!bmc.subscribers?.unsubscribe(path.slice(SUBSCRIPTIONS.length + 1))) throw notFound(path);
  return { status: 204 };
}

const TEST_EVENT_TYPES = ['Alert', 'StatusChange'] as const;

/** EventService.SubmitTestEvent: ResourceEvent TestMessage to the subscribers (EventType Alert unless named). */
export function submitTestEvent(bmc: SimulatedBmc, body: unknown): Reply {
  const type = isObject(body) ? (body['EventType'] ?? 'Alert') : 'Alert';
  if (!TEST_EVENT_TYPES.includes(type as (typeof TEST_EVENT_TYPES)[number]))
    throw redfishError(400, 'ActionParameterValueNotInList', [
      String(type),
      'EventType',
      'EventService.SubmitTestEvent',
    ]);
  testEvent(bmc, type as (typeof TEST_EVENT_TYPES)[number]);
  return { status: 204 };
}

import { entriesPath, LOG_CAPACITY, logEntryBody } from '../event-log.js';
import {
  EVENT_SERVICE,
  REGISTRY_PREFIXES,
  RETRY_ATTEMPTS,
  RETRY_INTERVAL_S,
  SUBMIT_TEST_EVENT,
  SUBSCRIPTIONS,
} from '../event-service.js';
import { collectionBody, ref, type Tree } from './common.js';

/**
 * An EventLog LogService under a system or manager, shaped after the GH200 capture's Systems/System_0 EventLog:
 * LogServices → EventLog (ClearLog action, WrapsWhenFull) → Entries (the collection carries the entries themselves,
 * as bmcweb's does, and each entry is also its own resource). Returns the LogService path.
 */
export function addEventLog(tree: Tree, owner: string, description: string): string {
  const services = `${owner}/LogServices`;
  const path = `${services}/EventLog`;
  tree.collection(services, 'LogServiceCollection', 'Log Service Collection', [path]);
  tree.add(path, () => ({
    '@odata.id': path,
    '@odata.type': '#LogService.v1_1_0.LogService',
    Id: 'EventLog',
    Name: 'Event Log Service',
    Description: description,
    DateTime: new Date().toISOString().replace(/\.\d+Z$/, '+00:00'),
    DateTimeLocalOffset: '+00:00',
    LogEntryType: 'Event',
    MaxNumberOfRecords: LOG_CAPACITY,
    OverWritePolicy: 'WrapsWhenFull',
    ServiceEnabled: true,
    Status: { State: 'Enabled', Health: 'OK' },
    Entries: ref(entriesPath(path)),
    Actions: { '#LogService.ClearLog': { target: clearLogTarget(path) } },
  }));
  tree.add(entriesPath(path), (bmc) => {
    const members = bmc.logRecords(path).map((r) => logEntryBody(path, r));
    return {
      '@odata.id': entriesPath(path),
      '@odata.type': '#LogEntryCollection.LogEntryCollection',
      Name: 'System Event Log Entries',
      Description: `Entries of the ${description}`,
      'Members@odata.count': members.length,
      Members: members,
    };
  });
  return path;
}

export const clearLogTarget = (logService: string) => `${logService}/Actions/LogService.ClearLog`;

/** The EventService (after the GH200 capture's, push delivery only) and its Subscriptions collection. */
export function addEventService(tree: Tree): void {
  tree.add(EVENT_SERVICE, () => ({
    '@odata.id': EVENT_SERVICE,
    '@odata.type': '#EventService.v1_7_2.EventService',
    Id: 'EventService',
    Name: 'Event Service',
    ServiceEnabled: true,
    Status: { State: 'Enabled', Health: 'OK' },
    DeliveryRetryAttempts: RETRY_ATTEMPTS,
    DeliveryRetryIntervalSeconds: RETRY_INTERVAL_S,
    EventFormatTypes: ['Event'],
    RegistryPrefixes: [...REGISTRY_PREFIXES],
    IncludeOriginOfConditionSupported: false,
    SubordinateResourcesSupported: false,
    Subscriptions: ref(SUBSCRIPTIONS),
    Actions: { '#EventService.SubmitTestEvent': { target: SUBMIT_TEST_EVENT } },
  }));
  tree.add(SUBSCRIPTIONS, (bmc) =>
    collectionBody(
      SUBSCRIPTIONS,
      'EventDestinationCollection',
      'Event Destination Collection',
      (bmc.subscribers?.ids ?? []).map((id) => `${SUBSCRIPTIONS}/${id}`),
    ),
  );
}

import type { SimulatedBmc } from './bmc.js';
import { entryPath } from './event-log.js';
import type { EventType } from './event-service.js';
import { message, type MessageKey } from './messages.js';
import type { ActiveFault, Health, LogScope } from './tray-health.js';

/**
 * What the BMC says when its hardware changes: an entry in the event log of the scope (ResourceEvent registry
 * messages, as NVIDIA's BMC logs them) and, while the BMC is up, the same message pushed to its event subscribers.
 *
 *   part fault (GPU, GPU off the bus, memory, NVLink, PSU)  ResourceErrorsDetected [part, reason]        Alert
 *   part fault cleared or part swapped                       ResourceErrorsCorrected [part, reason]       StatusChange
 *   leak detector trips, temperature past a threshold        ResourceStatusChanged{Warning,Critical}      Alert
 *   leak detector recovers, temperature back                 ResourceStatusChangedOK                      StatusChange
 *   host or shelf output reaches On / Off                    ResourcePoweredOn / ResourcePoweredOff       StatusChange
 *   the BMC is up again after a reboot or AC loss            ResourcePoweredOn [manager]                  StatusChange
 */
interface Announcement {
  log: LogScope;
  key: MessageKey<'ResourceEvent'>;
  args: string[];
  severity: Health;
  origin: string;
  eventType: EventType;
}

function announce(bmc: SimulatedBmc, a: Announcement): void {
  const m = message('ResourceEvent', a.key, a.args);
  const logService = bmc.logServiceFor(a.log);
  const entry = { severity: a.severity, messageId: m.MessageId, message: m.Message, messageArgs: a.args };
  const record = logService ? bmc.eventLog(logService).append({ ...entry, origin: a.origin }) : undefined;
  if (!bmc.reachable) return;
  bmc.subscribers?.publish({
    ...entry,
    eventType: a.eventType,
    origin: a.origin,
    ...(logService && record ? { logEntry: entryPath(logService, record.id) } : {}),
  });
}

/** Leak detectors and sensors change state (a message naming the new health), parts report errors. */
const statusChange = (key: string) => key.startsWith('leak/') || key.startsWith('thermal/');

export function faultDetected(bmc: SimulatedBmc, key: string, fault: ActiveFault): void {
  const at = bmc.profile.parts!.locate(key);
  const leak = statusChange(key);
  announce(bmc, {
    log: at.log,
    key: leak
      ? fault.health === 'Critical'
        ? 'ResourceStatusChangedCritical'
        : 'ResourceStatusChangedWarning'
      : 'ResourceErrorsDetected',
    args: leak ? [at.name, fault.health] : [at.name, fault.reason],
    severity: fault.health,
    origin: at.origin,
    eventType: 'Alert',
  });
}

export function faultCleared(bmc: SimulatedBmc, key: string, fault: ActiveFault): void {
  const at = bmc.profile.parts!.locate(key);
  const leak = statusChange(key);
  announce(bmc, {
    log: at.log,
    key: leak ? 'ResourceStatusChangedOK' : 'ResourceErrorsCorrected',
    args: leak ? [at.name, 'OK'] : [at.name, fault.reason],
    severity: 'OK',
    origin: at.origin,
    eventType: 'StatusChange',
  });
}

/** The host (or a shelf's output) settled On or Off. */
export function powerChanged(bmc: SimulatedBmc): void {
  if (bmc.powerState !== 'On' && bmc.powerState !== 'Off') return;
  const resource = bmc.profile.power.resource;
  announce(bmc, {
    log: 'system',
    key: bmc.powerState === 'On' ? 'ResourcePoweredOn' : 'ResourcePoweredOff',
    args: [resource.slice(resource.lastIndexOf('/') + 1)],
    severity: 'OK',
    origin: resource,
    eventType: 'StatusChange',
  });
}

/** The BMC finished booting (after Manager.Reset or when AC came back). */
export function bmcBooted(bmc: SimulatedBmc): void {
  const manager = bmc.profile.managers[0]!;
  announce(bmc, {
    log: 'manager',
    key: 'ResourcePoweredOn',
    args: [manager.slice(manager.lastIndexOf('/') + 1)],
    severity: 'OK',
    origin: manager,
    eventType: 'StatusChange',
  });
}

/** EventService.SubmitTestEvent: a test message to every subscriber whose filters take it (not logged). */
export function testEvent(bmc: SimulatedBmc, eventType: EventType): void {
  const m = message('ResourceEvent', 'TestMessage');
  bmc.events().publish({
    eventType,
    severity: 'OK',
    messageId: m.MessageId,
    message: m.Message,
    messageArgs: [],
    origin: '/redfish/v1/EventService',
  });
}

import type { Health } from './tray-health.js';

/** One entry of a BMC event log: a registry message about a resource, as the BMC recorded it. */
export interface LogRecord {
  /** Monotonic per log; ClearLog does not restart it (as on NVIDIA's BMC, whose entry ids keep counting). */
  id: number;
  created: string;
  severity: Health;
  messageId: string;
  message: string;
  messageArgs: string[];
  /** The resource the entry is about. */
  origin: string;
}

/** How many entries a log keeps; the oldest is overwritten first (OverWritePolicy WrapsWhenFull). */
export const LOG_CAPACITY = 500;

/** A bounded ring of log entries, for one LogService. */
export class EventLog {
  private readonly ring: LogRecord[] = [];
  private next = 1;

  append(entry: Omit<LogRecord, 'id' | 'created'>): LogRecord {
    const record = { id: this.next++, created: new Date().toISOString(), ...entry };
    this.ring.push(record);
    if (this.ring.length > LOG_CAPACITY) this.ring.shift();
    return record;
  }

  clear(): void {
    this.ring.length = 0;
  }

  get records(): readonly LogRecord[] {
    return this.ring;
  }

  byId(id: string): LogRecord | undefined {
    return this.ring.find((r) => String(r.id) === id);
  }
}

export const entriesPath = (logService: string) => `${logService}/Entries`;
export const entryPath = (logService: string, id: number) => `${entriesPath(logService)}/${id}`;

/** A LogEntry resource, shaped after the GH200 capture's EventLog entries. */
export function logEntryBody(logService: string, r: LogRecord): Record<string, unknown> {
  return {
    '@odata.id': entryPath(logService, r.id),
    '@odata.type': '#LogEntry.v1_13_0.LogEntry',
    Id: String(r.id),
    Name: 'System Event Log Entry',
    EntryType: 'Event',
    Created: r.created,
    Severity: r.severity,
    Message: r.message,
    MessageId: r.messageId,
    MessageArgs: r.messageArgs,
    Resolved: false,
    Links: { OriginOfCondition: { '@odata.id': r.origin } },
  };
}

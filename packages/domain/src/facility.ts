/**
 * Facility events (docs/day2.md, "Facility events"): a building management system reports a leak, a power-feed,
 * cooling or smoke alarm on racks, and the hub answers by grade: record it, hold the racks' devices, or power the racks
 * off in order (an operator approves the power-off unless the event is marked critical). The grading is a table, so the
 * answer to an event is read, not derived from code paths. Dependency-free (no zod).
 */

export const facilityEventKinds = ['leak', 'power_feed', 'cooling', 'smoke', 'other'] as const;
export type FacilityEventKind = (typeof facilityEventKinds)[number];

export const facilitySeverities = ['info', 'warning', 'critical'] as const;
export type FacilitySeverity = (typeof facilitySeverities)[number];

/** What the hub does about an event: each response includes the ones before it. */
export const facilityResponses = ['record', 'quarantine', 'power_off'] as const;
export type FacilityResponse = (typeof facilityResponses)[number];

/** One action on the event's racks: hold every device (device.quarantine jobs), or the ordered rack power-off. */
export type FacilityStep = 'quarantine' | 'power_off';

/**
 * - recorded: kept, nothing done (info);
 * - quarantined: the devices' quarantine jobs were made (warning);
 * - awaiting_approval: held, the power-off waits for an operator (or could not start: the racks say why);
 * - powering_off: the rack power-off jobs run;
 * - done / failed: every step made, the power-off succeeded / did not (failed or cancelled);
 * - rejected: an operator refused the power-off; the devices stay held.
 */
export const facilityEventStates = [
  'recorded',
  'quarantined',
  'awaiting_approval',
  'powering_off',
  'done',
  'failed',
  'rejected',
] as const;
export type FacilityEventState = (typeof facilityEventStates)[number];

/** The response per kind (rows) and severity (columns). */
export const facilityGradingTable: Readonly<
  Record<FacilityEventKind, Readonly<Record<FacilitySeverity, FacilityResponse>>>
> = {
  // Liquid or smoke at a rack is a power-off matter from the first warning: the operator only confirms it.
  leak: { info: 'record', warning: 'power_off', critical: 'power_off' },
  smoke: { info: 'record', warning: 'power_off', critical: 'power_off' },
  power_feed: { info: 'record', warning: 'quarantine', critical: 'power_off' },
  cooling: { info: 'record', warning: 'quarantine', critical: 'power_off' },
  other: { info: 'record', warning: 'quarantine', critical: 'power_off' },
};

/**
 * The order of the steps per response and approval. With an operator's approval to wait for, the devices are held
 * first (nothing else acts on them meanwhile); a critical event cuts the power first and holds the devices once the
 * power-off ended (a device runs one job at a time, so the holds cannot run alongside the rack's sequence).
 */
export const facilityStepOrder: Readonly<Record<FacilityResponse, Readonly<Record<FacilityApproval, FacilityStep[]>>>> =
  {
    record: { operator: [], none: [] },
    quarantine: { operator: ['quarantine'], none: ['quarantine'] },
    power_off: { operator: ['quarantine', 'power_off'], none: ['power_off', 'quarantine'] },
  };

/** Who lets the power-off go: an operator, or no one (the event is marked critical). */
export type FacilityApproval = 'operator' | 'none';

export interface FacilityEventFacts {
  kind: FacilityEventKind;
  severity: FacilitySeverity;
  /** The building management system's own "act now": the power-off waits for no one. */
  critical: boolean;
}

/** The decision on an event, as stored with it and written to the audit log. */
export interface FacilityGrading {
  response: FacilityResponse;
  /** Set for a power-off. */
  approval: FacilityApproval | null;
  steps: FacilityStep[];
  /** Why, for people. */
  rule: string;
}

/** Grades an event by the table; an event marked critical is a power-off without approval whatever its severity. */
export function gradeFacilityEvent(e: FacilityEventFacts): FacilityGrading {
  const response: FacilityResponse = e.critical ? 'power_off' : facilityGradingTable[e.kind][e.severity];
  const approval: FacilityApproval | null = response !== 'power_off' ? null : e.critical ? 'none' : 'operator';
  const steps = [...facilityStepOrder[response][approval ?? 'none']];
  const rule = e.critical
    ? `${e.kind} marked critical: power-off without approval, then hold the devices`
    : `${e.kind} at ${e.severity}: ${describeResponse(response)}`;
  return { response, approval, steps, rule };
}

function describeResponse(r: FacilityResponse): string {
  if (r === 'record') return 'record only';
  if (r === 'quarantine') return "hold the racks' devices";
  return "hold the racks' devices, then power the racks off once an operator approves";
}

/** The state an event ends in once its steps are made (a power-off's outcome decides done or failed). */
export function finalFacilityState(g: FacilityGrading, powerOffSucceeded: boolean): FacilityEventState {
  if (g.steps.includes('power_off')) return powerOffSucceeded ? 'done' : 'failed';
  return g.steps.includes('quarantine') ? 'quarantined' : 'recorded';
}

/** One device's part of a step: its quarantine job, or why it was left out. */
export interface FacilityDeviceAction {
  deviceId: string;
  name: string;
  jobId?: string;
  /** Why no job: held already, busy with another job, decommissioned. */
  skipped?: string;
}

/** What the event did on one of its racks. */
export interface FacilityRackActions {
  rackId: string;
  /** Set once the quarantine step ran on the rack. */
  quarantine?: FacilityDeviceAction[];
  powerOff?: {
    jobId?: string;
    /** Why the power-off could not start (a busy device, another sequence of the rack). */
    refused?: string;
    /** The job's end state, once it ended. */
    outcome?: string;
  };
}

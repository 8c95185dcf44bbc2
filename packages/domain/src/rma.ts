/**
 * RMA cases (docs/day2.md, "RMA"): a device's failed part sent back to its vendor, from the case's opening (a
 * remediation that ran out of steps, or an operator) to the device's return through enrolment. The states, who makes
 * each move, and the swap the Redfish inventory shows once the device is back. Dependency-free (no zod).
 */
import type { HardwareRecord } from './enrolment.js';
import { traySerialKey } from './hardware-inventory.js';
import { lifecycleTable, type FleetLifecycleState } from './lifecycle.js';

export const rmaStates = ['open', 'shipped', 'replaced', 'revalidating', 'closed'] as const;
export type RmaState = (typeof rmaStates)[number];

/** Who moves a case: an operator through the API, or the workflow agent as it projects the device's enrolment. */
export type RmaMover = 'operator' | 'enrolment';

export interface RmaRule {
  from: readonly RmaState[];
  to: RmaState;
  by: RmaMover;
  /** The job the move starts, on the case's device. */
  job?: 'device.rma_ship' | 'device.rma_return';
  why: string;
}

/** The transition table: a move not listed is refused, and so is one asked for by the other mover. */
export const rmaTable: readonly RmaRule[] = [
  {
    from: ['open', 'revalidating'],
    to: 'shipped',
    by: 'operator',
    job: 'device.rma_ship',
    why: 'The hardware leaves for the vendor (the device moves to rma); from revalidating: the return failed it',
  },
  {
    from: ['shipped'],
    to: 'replaced',
    by: 'operator',
    job: 'device.rma_return',
    why: 'Back from the vendor, repaired or replaced: the device is discovered, to be enrolled again',
  },
  {
    from: ['replaced'],
    to: 'revalidating',
    by: 'enrolment',
    why: 'An enrolment of the device started',
  },
  {
    from: ['revalidating'],
    to: 'closed',
    by: 'enrolment',
    why: 'The enrolment (or burn-in) certified the device; the swap is recorded',
  },
  {
    from: ['open'],
    to: 'closed',
    by: 'operator',
    why: 'Nothing to ship: the fault was misdiagnosed or fixed on site (the reason says which)',
  },
];

export function isRmaState(value: string): value is RmaState {
  return (rmaStates as readonly string[]).includes(value);
}

/** The rule that allows from → to, if one does (whoever makes it). */
export function rmaRule(from: RmaState, to: RmaState): RmaRule | undefined {
  return rmaTable.find((r) => r.to === to && r.from.includes(from));
}

/** The states an operator (or the enrolment) may move a case in `from` to. */
export function nextRmaStates(from: RmaState, by: RmaMover): RmaState[] {
  return rmaTable.filter((r) => r.by === by && r.from.includes(from)).map((r) => r.to);
}

/** Why `by` may not move a case from → to, or undefined when it may. */
export function rmaRefusal(from: RmaState, to: RmaState, by: RmaMover): string | undefined {
  const rule = rmaRule(from, to);
  if (rule?.by === by) return undefined;
  if (rule)
    return rule.by === 'enrolment'
      ? `the case moves to ${to} by itself (${rule.why.toLowerCase()})`
      : `only an operator moves a case to ${to}`;
  const allowed = nextRmaStates(from, by);
  const options = allowed.length ? `it may move to ${allowed.join(', ')}` : `${from} is final`;
  return `the case is ${from}: it cannot move to ${to} (${options})`;
}

/** Thrown by the repository when the table refuses a case's move; the API answers 409. */
export class RmaTransitionRefused extends Error {
  readonly code = 'CONFLICT' as const;
  constructor(
    readonly caseId: string,
    readonly current: RmaState,
    readonly requested: RmaState,
    message: string,
  ) {
    super(`RMA case ${caseId}: ${message}`);
    this.name = 'RmaTransitionRefused';
  }
}

const lifecycleFrom = (event: string): readonly FleetLifecycleState[] =>
  lifecycleTable.find((r) => r.event === event)!.from;

/** The device states a case's device may be shipped from, and returned from: the lifecycle table's own moves. */
export const rmaShipFrom = lifecycleFrom('return_to_vendor');
export const rmaReturnFrom = lifecycleFrom('back_from_vendor');

/** One step of a case's history. */
export interface RmaMove {
  /** Null for the opening. */
  from: RmaState | null;
  to: RmaState;
  at: string;
  /** The operator, or `enrolment`, or the path that opened it (`remediation`). */
  by: string;
  reason: string;
  /** The job that opened the case, took the device away or back, or revalidated it. */
  jobId?: string;
}

/** A part whose serial number changed while the device was away: `tray` for the device's own. */
export interface RmaSwap {
  part: string;
  /** Null when the part was not there (or reported no serial) before. */
  old: string | null;
  /** Null when it is not there (or reports no serial) now. */
  new: string | null;
}

/** The serial numbers a stored hardware record names, by part id, and `tray` for the device (as serialsOf). */
export function serialsOfRecord(record: HardwareRecord): Record<string, string> {
  const out: Record<string, string> = {};
  if (record.serialNumber) out[traySerialKey] = record.serialNumber;
  for (const p of record.parts) if (p.serialNumber) out[p.id] = p.serialNumber;
  return out;
}

/**
 * The parts whose serial differs between the reads before and after, by part id. Without a read before there is
 * nothing to compare against: no swap can be named.
 */
export function partSwaps(before: Record<string, string>, after: Record<string, string>): RmaSwap[] {
  if (Object.keys(before).length === 0) return [];
  const parts = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return parts
    .filter((p) => before[p] !== after[p])
    .map((p) => ({ part: p, old: before[p] ?? null, new: after[p] ?? null }));
}

/**
 * Fleet's own device lifecycle (the `lifecycle` axis; docs/lifecycle.md): the states, and the transition table that is
 * the only definition of which move is legal. Only lifecycle workflows write this axis; the repository checks every
 * write against this table under a row lock. Dependency-free (no zod) so workflow code may use it.
 */

/** The main line a device walks from first sight in NetBox to serving jobs. */
export const mainLineLifecycleStates = [
  'discovered',
  'enrolling',
  'enrolled',
  'burning_in',
  'certified',
  'in_service',
] as const;

/** Side states: a workflow failed, a device is held, repaired, away at the vendor, or gone for good. */
export const sideLifecycleStates = ['failed', 'quarantined', 'remediating', 'rma', 'decommissioned'] as const;

/** Fleet's lifecycle; not NetBox's device status (`lifecycleStates`, the inventory axis). */
export const fleetLifecycleStates = [...mainLineLifecycleStates, ...sideLifecycleStates] as const;
export type FleetLifecycleState = (typeof fleetLifecycleStates)[number];

/** Every device starts here, including those that existed before the lifecycle did. */
export const initialLifecycleState: FleetLifecycleState = 'discovered';

/** The lifecycle workflow that takes a transition (all of them write as the `lifecycle-workflow` writer). */
export type LifecycleWorkflow =
  'enrolment' | 'burn-in' | 'provisioning' | 'quarantine' | 'remediation' | 'rma' | 'decommission';

export interface LifecycleRule {
  /** What happened, in the workflow's words. */
  event: string;
  from: readonly FleetLifecycleState[];
  to: FleetLifecycleState;
  by: LifecycleWorkflow;
  why: string;
}

const allExcept = (...excluded: FleetLifecycleState[]): FleetLifecycleState[] =>
  fleetLifecycleStates.filter((s) => !excluded.includes(s));

/**
 * The transition table. A move not listed here is refused; no state moves to itself. docs/lifecycle.md shows the
 * same table with the reasoning (a test keeps the two equal).
 */
export const lifecycleTable: readonly LifecycleRule[] = [
  {
    event: 'enrol',
    from: ['discovered', 'failed'],
    to: 'enrolling',
    by: 'enrolment',
    why: 'Prove the BMC, its credentials and the inventory; after a failure, from scratch',
  },
  {
    event: 'enrolment_passed',
    from: ['enrolling'],
    to: 'enrolled',
    by: 'enrolment',
    why: 'BMCReachable, CredentialsVerified and InventoryMatchesProfile are True',
  },
  {
    event: 'enrolment_cancelled',
    from: ['enrolling'],
    to: 'discovered',
    by: 'enrolment',
    why: 'Nothing was proven, so the device is as it was found (Ironic: verifying falls back to enroll)',
  },
  {
    event: 'enrolment_failed',
    from: ['enrolling'],
    to: 'failed',
    by: 'enrolment',
    why: 'A check failed or could not run: fail closed',
  },
  {
    event: 'start_burn_in',
    from: ['enrolled'],
    to: 'burning_in',
    by: 'burn-in',
    why: 'An enrolled device is tested before anyone may use it',
  },
  {
    event: 'retest',
    from: ['certified'],
    to: 'burning_in',
    by: 'burn-in',
    why: 'Certify again before service, e.g. after a firmware change',
  },
  {
    event: 'burn_in_passed',
    from: ['burning_in'],
    to: 'certified',
    by: 'burn-in',
    why: 'Every test ran and passed (BurnInPassed is True)',
  },
  {
    event: 'burn_in_cancelled',
    from: ['burning_in'],
    to: 'enrolled',
    by: 'burn-in',
    why: 'No verdict: enrolled, not certified',
  },
  {
    event: 'burn_in_failed',
    from: ['burning_in'],
    to: 'failed',
    by: 'burn-in',
    why: 'A test failed or could not run: fail closed',
  },
  {
    event: 'put_in_service',
    from: ['certified'],
    to: 'in_service',
    by: 'provisioning',
    why: 'Handed to the scheduler; only a certified device may be',
  },
  {
    event: 'quarantine',
    from: allExcept('quarantined', 'rma', 'decommissioned'),
    to: 'quarantined',
    by: 'quarantine',
    why: 'The safety stop, open wherever the device is on site; also where a remediation that gives up leaves it',
  },
  {
    event: 'remediate',
    from: ['quarantined', 'failed'],
    to: 'remediating',
    by: 'remediation',
    why: 'Someone works on a held or failed device',
  },
  {
    event: 'reenrol',
    from: ['remediating'],
    to: 'enrolling',
    by: 'remediation',
    why: 'A repair changed the BMC or its credentials: prove them again',
  },
  {
    event: 'revalidate',
    from: ['remediating'],
    to: 'burning_in',
    by: 'remediation',
    why: 'Repaired hardware is tested again before service',
  },
  {
    event: 'release',
    from: ['remediating'],
    to: 'in_service',
    by: 'remediation',
    why: 'The fault was not in the hardware (configuration, false alarm) and a health check passed',
  },
  {
    event: 'restore_certified',
    from: ['remediating'],
    to: 'certified',
    by: 'remediation',
    why: 'A certified device held for a fault that a playbook step cleared, and a health check passed',
  },
  {
    event: 'restore_enrolled',
    from: ['remediating'],
    to: 'enrolled',
    by: 'remediation',
    why: 'An enrolled (or burning-in) device held for a fault that was cleared: enrolled, burn-in still to come',
  },
  {
    event: 'restore_discovered',
    from: ['remediating'],
    to: 'discovered',
    by: 'remediation',
    why: 'A device held before enrolment finished (or after it failed), cleared: nothing proven, it starts again',
  },
  {
    event: 'return_to_vendor',
    from: ['failed', 'quarantined', 'remediating'],
    to: 'rma',
    by: 'rma',
    why: 'Shipped back for repair or replacement',
  },
  {
    event: 'back_from_vendor',
    from: ['rma'],
    to: 'discovered',
    by: 'rma',
    why: 'Repaired or replaced hardware proves nothing yet: it starts again',
  },
  {
    event: 'decommission',
    from: allExcept('enrolling', 'burning_in', 'decommissioned'),
    to: 'decommissioned',
    by: 'decommission',
    why: 'Retired for good; a running enrolment or burn-in ends (cancel or fail) first',
  },
];

const key = (from: FleetLifecycleState, to: FleetLifecycleState) => `${from}>${to}`;
const ruleByEdge = new Map<string, LifecycleRule>();
for (const rule of lifecycleTable) {
  for (const from of rule.from) {
    // The table must be a function of (from, to): one rule, one event, one workflow per move.
    if (from === rule.to || ruleByEdge.has(key(from, rule.to)))
      throw new Error(`lifecycle table: ${from} → ${rule.to}`);
    ruleByEdge.set(key(from, rule.to), rule);
  }
}

const nextStates = new Map<FleetLifecycleState, readonly FleetLifecycleState[]>(
  fleetLifecycleStates.map((from) => [from, fleetLifecycleStates.filter((to) => ruleByEdge.has(key(from, to)))]),
);

/** States with no way out. */
export const terminalLifecycleStates: readonly FleetLifecycleState[] = fleetLifecycleStates.filter(
  (s) => nextStates.get(s)!.length === 0,
);

export function isFleetLifecycleState(value: string): value is FleetLifecycleState {
  return (fleetLifecycleStates as readonly string[]).includes(value);
}

/** The states `from` may move to, in table order. */
export function nextLifecycleStates(from: FleetLifecycleState): readonly FleetLifecycleState[] {
  return nextStates.get(from) ?? [];
}

/** The rule that allows from → to, if one does. */
export function lifecycleRule(from: FleetLifecycleState, to: FleetLifecycleState): LifecycleRule | undefined {
  return ruleByEdge.get(key(from, to));
}

/** A refused move: what the device is in, what was asked, and what it could move to instead. */
export interface LifecycleRefusal {
  /** The API answers 409. */
  code: 'CONFLICT';
  current: FleetLifecycleState;
  requested: FleetLifecycleState;
  allowed: readonly FleetLifecycleState[];
  message: string;
}

export type LifecycleTransition =
  { ok: true; state: FleetLifecycleState; rule: LifecycleRule } | { ok: false; refusal: LifecycleRefusal };

export function lifecycleRefusalMessage(current: FleetLifecycleState, requested: FleetLifecycleState): string {
  const allowed = nextLifecycleStates(current);
  const options = allowed.length ? `it may move to ${allowed.join(', ')}` : `${current} is terminal`;
  return `device is ${current}: it cannot move to ${requested} (${options})`;
}

/** Checks from → to against the table: the new state, or a refusal naming the current state. */
export function transition(from: FleetLifecycleState, to: FleetLifecycleState): LifecycleTransition {
  const rule = lifecycleRule(from, to);
  if (rule) return { ok: true, state: to, rule };
  const refusal: LifecycleRefusal = {
    code: 'CONFLICT',
    current: from,
    requested: to,
    allowed: nextLifecycleStates(from),
    message: lifecycleRefusalMessage(from, to),
  };
  return { ok: false, refusal };
}

/** Thrown by writers of the lifecycle axis when the table refuses a move; carries the refusal. */
export class LifecycleTransitionRefused extends Error {
  readonly code = 'CONFLICT' as const;
  readonly current: FleetLifecycleState;
  readonly requested: FleetLifecycleState;
  readonly allowed: readonly FleetLifecycleState[];
  constructor(refusal: LifecycleRefusal) {
    super(refusal.message);
    this.name = 'LifecycleTransitionRefused';
    this.current = refusal.current;
    this.requested = refusal.requested;
    this.allowed = refusal.allowed;
  }
}

/**
 * Where a device held in `quarantined` goes once a remediation (or a release's health check) clears it: back where it
 * was, except that a running enrolment or burn-in, interrupted, proved nothing more than the step before it.
 */
export function restoreStateFor(beforeQuarantine: FleetLifecycleState): FleetLifecycleState {
  switch (beforeQuarantine) {
    case 'in_service':
    case 'certified':
    case 'enrolled':
      return beforeQuarantine;
    case 'burning_in':
      return 'enrolled';
    default:
      return 'discovered';
  }
}

import {
  getFacilityEvent,
  getRack,
  insertFacilityEvent,
  jobStatesOf,
  lockFacilityEvent,
  rackDevices,
  updateFacilityEvent,
  type Db,
  type FacilityEvent,
  type Tx,
} from '@fleet/db';
import {
  finalFacilityState,
  gradeFacilityEvent,
  isHeld,
  isTerminal,
  type FacilityEventKind,
  type FacilityEventState,
  type FacilityRackActions,
  type FacilitySeverity,
  type JobState,
} from '@fleet/domain';
import type { RemediationConfig } from '../config.js';
import { ApiError, invalid, notFound } from '../errors.js';
import { auditAccepted, type Caller } from './caller.js';
import { createParentJob } from './parent-jobs.service.js';
import { quarantineDevice } from './remediation.service.js';

export interface FacilityEventInput {
  externalId: string;
  kind: FacilityEventKind;
  severity: FacilitySeverity;
  critical: boolean;
  rackIds: string[];
  location?: string | undefined;
  message: string;
  occurredAt?: Date | undefined;
}

const target = (id: string) => `facility-event/${id}`;

/** The reason the event's jobs carry (device history, the power-off's override of the holds). */
function reasonOf(e: FacilityEvent): string {
  const grade = `${e.kind}, ${e.severity}${e.critical ? ', critical' : ''}`;
  const where = e.location ? ` at ${e.location}` : '';
  return `facility event ${e.id} (${grade}) from ${e.source}${where}: ${e.message}`.slice(0, 2000);
}

/**
 * The jobs join the event's transaction (drizzle runs their own as a savepoint): the event, its jobs, their intents and
 * every audit row commit together or not at all, and no second pool connection is taken while the event is locked.
 */
const inEventTx = (tx: Tx) => tx as unknown as Db;

/** The jobs an event makes are no replay of the request's Idempotency-Key: each is its own. */
const jobCallerOf = (caller: Caller): Caller => ({ ...caller, idempotencyKey: undefined, audited: false });

/** Only a 409 (the device or rack is busy, held or cannot be operated) leaves it out; all else throws. */
function refusal(err: unknown): string {
  if (err instanceof ApiError && err.status === 409) return err.message;
  throw err;
}

const sameFacts = (e: FacilityEvent, i: FacilityEventInput) =>
  e.kind === i.kind &&
  e.severity === i.severity &&
  e.critical === i.critical &&
  [...e.rackIds].sort().join() === [...new Set(i.rackIds)].sort().join();

/**
 * Records a building management system's event and answers it by its grade (docs/day2.md, "Facility events"): the
 * event, its grading and every action are audit rows. A repeat of the source's external id answers the first event
 * (`created: false`) and acts no more; the same id for other facts is a 409.
 */
export async function receiveFacilityEvent(
  db: Db,
  config: RemediationConfig,
  caller: Caller,
  input: FacilityEventInput,
): Promise<{ event: FacilityEvent; created: boolean }> {
  const rackIds = [...new Set(input.rackIds)];
  for (const [i, id] of rackIds.entries())
    if (!(await getRack(db, id))) throw invalid(`body.rack_ids.${i}`, `rack ${id} does not exist`);
  const grading = gradeFacilityEvent(input);
  return inTransaction(db, caller, async (tx) => {
    const { event, inserted } = await insertFacilityEvent(tx, {
      source: caller.actor.name,
      externalId: input.externalId,
      kind: input.kind,
      severity: input.severity,
      critical: input.critical,
      rackIds,
      location: input.location ?? null,
      message: input.message,
      occurredAt: input.occurredAt ?? null,
      grading,
      state: 'recorded',
      actions: rackIds.map((rackId) => ({ rackId })),
    });
    if (!inserted) {
      if (!sameFacts(event, input))
        throw new ApiError(
          'CONFLICT',
          `external_id ${input.externalId} of ${caller.actor.name} is event ${event.id} (${event.kind}, ` +
            `${event.severity}${event.critical ? ', critical' : ''} on ${event.rackIds.length} rack(s)); a ` +
            'different event needs its own id',
          [{ field: 'body.external_id', issue: `already used for event ${event.id}` }],
        );
      return { event, created: false };
    }
    await auditAccepted(tx, caller, 201, {
      action: 'facility.event.received',
      target: target(event.id),
      details: {
        external_id: event.externalId,
        kind: event.kind,
        severity: event.severity,
        critical: event.critical,
        rack_ids: event.rackIds,
        location: event.location,
        message: event.message,
      },
    });
    await auditAccepted(tx, caller, 201, {
      action: 'facility.event.graded',
      target: target(event.id),
      details: { ...grading },
    });
    return { event: await advance(config, tx, caller, event), created: true };
  });
}

/**
 * Runs `fn` in one transaction; when it fails, nothing it wrote is kept, its audit rows neither, so the request's own
 * refusal is audited (plugins/audit.ts) instead.
 */
async function inTransaction<T>(db: Db, caller: Caller, fn: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(fn);
  } catch (err) {
    caller.audited = false;
    throw err;
  }
}

/** Runs `fn` on the event under its row lock (one response step at a time, whichever hub runs it). */
function withEvent<T>(db: Db, caller: Caller, id: string, fn: (tx: Tx, e: FacilityEvent) => Promise<T>): Promise<T> {
  return inTransaction(db, caller, async (tx) => {
    const e = await lockFacilityEvent(tx, id);
    if (!e) throw notFound('facility event', id);
    return fn(tx, e);
  });
}

/**
 * Makes the event's steps that can be made now, in the grading's order, and stores where it stands: a power-off
 * that waits for an operator (or could not start) stops at awaiting_approval, one whose jobs run at powering_off (the
 * follower takes it on when they end), and an event with every step made ends in its final state.
 */
async function advance(config: RemediationConfig, tx: Tx, caller: Caller, e: FacilityEvent): Promise<FacilityEvent> {
  const actions = structuredClone(e.actions);
  const jobIds = [...e.jobIds];
  const save = (state: FacilityEventState) => updateFacilityEvent(tx, e.id, { state, actions, jobIds });
  for (const step of e.grading.steps) {
    if (step === 'quarantine') {
      if (actions.some((a) => !a.quarantine)) await quarantineRacks(config, tx, caller, e, actions, jobIds);
      continue;
    }
    const pending = actions.filter((a) => !a.powerOff?.jobId);
    if (pending.length === 0) {
      if (actions.some((a) => !a.powerOff?.outcome)) return save('powering_off');
      continue;
    }
    if (e.grading.approval === 'operator' && e.decision !== 'approve') return save('awaiting_approval');
    await powerOffRacks(tx, caller, e, pending, jobIds);
    return save(pending.some((a) => !a.powerOff?.jobId) ? 'awaiting_approval' : 'powering_off');
  }
  return save(
    finalFacilityState(
      e.grading,
      actions.every((a) => a.powerOff?.outcome === 'succeeded'),
    ),
  );
}

/** Holds every device of the racks not done yet: a device.quarantine job each; held or busy devices are left out. */
async function quarantineRacks(
  config: RemediationConfig,
  tx: Tx,
  caller: Caller,
  e: FacilityEvent,
  actions: FacilityRackActions[],
  jobIds: string[],
): Promise<void> {
  const reason = reasonOf(e);
  const jobCaller = jobCallerOf(caller);
  for (const a of actions) {
    if (a.quarantine) continue;
    a.quarantine = [];
    for (const d of await rackDevices(tx, a.rackId)) {
      const one = { deviceId: d.id, name: d.name };
      if (isHeld(d.fleetLifecycle)) {
        a.quarantine.push({ ...one, skipped: `${d.name} is ${d.fleetLifecycle} already` });
        continue;
      }
      try {
        const job = await quarantineDevice(inEventTx(tx), jobCaller, config, d, { reason, remediate: false });
        a.quarantine.push({ ...one, jobId: job.id });
        jobIds.push(job.id);
      } catch (err) {
        a.quarantine.push({ ...one, skipped: refusal(err) });
      }
    }
  }
  await auditAccepted(tx, caller, 200, {
    action: 'facility.quarantine',
    target: target(e.id),
    details: {
      racks: actions.map((a) => ({
        rack_id: a.rackId,
        jobs: a.quarantine!.filter((d) => d.jobId).map((d) => ({ device_id: d.deviceId, job_id: d.jobId })),
        skipped: a.quarantine!.filter((d) => d.skipped).map((d) => ({ device_id: d.deviceId, reason: d.skipped })),
      })),
    },
  });
}

/**
 * The ordered power-off (rack.power off: compute, switches, shelves) of each pending rack, overriding the holds with
 * the event as the reason; a rack that cannot start now (a busy device, another sequence) keeps why.
 */
async function powerOffRacks(
  tx: Tx,
  caller: Caller,
  e: FacilityEvent,
  pending: FacilityRackActions[],
  jobIds: string[],
): Promise<void> {
  const reason = reasonOf(e);
  for (const a of pending) {
    const rack = await getRack(tx, a.rackId);
    if (!rack) {
      a.powerOff = { refused: `rack ${a.rackId} no longer exists` };
      continue;
    }
    try {
      const { job } = await createParentJob(inEventTx(tx), jobCallerOf(caller), {
        parent: {
          kind: 'rack.power',
          siteId: rack.siteId,
          rackId: rack.id,
          params: { op: 'off', facility_event: e.id },
        },
        devices: await rackDevices(tx, rack.id),
        childParams: () => ({ sequence: 'rack.power' }),
        allOrNothing: true,
        childWorkflows: false,
        action: 'rack.power',
        target: `rack/${rack.id}`,
        overrideQuarantine: { reason },
      });
      a.powerOff = { jobId: job.id };
      jobIds.push(job.id);
    } catch (err) {
      a.powerOff = { refused: refusal(err) };
    }
  }
  const approval =
    e.decision === 'approve'
      ? `approved by ${e.decidedBy}: ${e.decisionReason}`
      : 'critical: powered off without approval';
  await auditAccepted(tx, caller, 202, {
    action: 'facility.power_off',
    target: target(e.id),
    details: {
      approval,
      racks: pending.map((a) => ({
        rack_id: a.rackId,
        ...(a.powerOff?.jobId ? { job_id: a.powerOff.jobId } : { refused: a.powerOff?.refused }),
      })),
    },
  });
}

/**
 * An operator's answer to the power-off of an event awaiting one. Approve starts the power-off of the racks that have
 * none yet (409, and nothing recorded, when none of them can start now); reject leaves the racks on and the devices
 * held (a critical event's, held after the power-off, are held now).
 */
export async function decideFacilityEvent(
  db: Db,
  config: RemediationConfig,
  caller: Caller,
  id: string,
  decision: 'approve' | 'reject',
  reason: string,
): Promise<FacilityEvent> {
  return withEvent(db, caller, id, async (tx, e) => {
    if (e.state !== 'awaiting_approval')
      throw new ApiError(
        'CONFLICT',
        `facility event ${id} is ${e.state}: ` +
          (e.decision ? `${e.decision}d by ${e.decidedBy}` : 'no power-off awaits a decision'),
        [{ field: 'path.id', issue: `event ${e.state}` }],
      );
    const decided = { decision, decidedBy: caller.actor.name, decidedAt: new Date(), decisionReason: reason };
    await auditAccepted(tx, caller, 200, {
      action: `facility.event.${decision}`,
      target: target(id),
      details: { reason },
    });
    if (decision === 'reject') {
      const actions = structuredClone(e.actions);
      const jobIds = [...e.jobIds];
      if (e.grading.steps.includes('quarantine') && actions.some((a) => !a.quarantine))
        await quarantineRacks(config, tx, caller, e, actions, jobIds);
      return updateFacilityEvent(tx, id, { ...decided, state: 'rejected', actions, jobIds });
    }
    const pending = e.actions.filter((a) => !a.powerOff?.jobId).length;
    const after = await advance(config, tx, caller, { ...e, ...decided });
    if (after.actions.filter((a) => !a.powerOff?.jobId).length === pending) {
      const why = after.actions.flatMap((a) =>
        a.powerOff?.refused ? [`rack ${a.rackId}: ${a.powerOff.refused}`] : [],
      );
      // Thrown inside the transaction: the approval and the refusals are not kept; approve again once it can start.
      throw new ApiError('CONFLICT', `the power-off cannot start now: ${why.join('; ')}`, [
        { field: 'path.id', issue: 'power-off refused' },
      ]);
    }
    return updateFacilityEvent(tx, id, decided);
  });
}

/**
 * Takes on an event whose power-off ended (every rack's job terminal): records each outcome, then makes the steps
 * left (a critical event's holds) and the final state. Nothing while a job runs; an event another hub holds is
 * skipped. Answers the event when it moved.
 */
export async function followPowerOff(
  db: Db,
  config: RemediationConfig,
  id: string,
): Promise<FacilityEvent | undefined> {
  const e0 = await getFacilityEvent(db, id);
  if (!e0 || e0.state !== 'powering_off') return undefined;
  const states = await jobStatesOf(
    db,
    e0.actions.flatMap((a) => (a.powerOff?.jobId ? [a.powerOff.jobId] : [])),
  );
  if ([...states.values()].some((s) => !isTerminal(s as JobState))) return undefined;
  // What follows from the event is written as its source's doing, as its first steps were.
  const caller: Caller = {
    actor: { name: e0.source, role: 'facility', sites: null },
    requestId: `facility-event-${id}`,
    action: 'facility power-off ended',
    idempotencyKey: undefined,
    fingerprint: '',
    audited: false,
  };
  return withEvent(db, caller, id, async (tx, e) => {
    if (e.state !== 'powering_off') return undefined;
    const actions = e.actions.map((a) =>
      a.powerOff?.jobId ? { ...a, powerOff: { ...a.powerOff, outcome: states.get(a.powerOff.jobId) ?? 'lost' } } : a,
    );
    await auditAccepted(tx, caller, 200, {
      action: 'facility.power_off.ended',
      target: target(id),
      details: {
        racks: actions.map((a) => ({ rack_id: a.rackId, job_id: a.powerOff?.jobId, outcome: a.powerOff?.outcome })),
      },
    });
    return advance(config, tx, caller, { ...e, actions });
  });
}

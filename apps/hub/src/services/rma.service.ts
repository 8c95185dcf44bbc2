import {
  getDevice,
  getRmaCase,
  openRmaCase,
  updateRmaCase,
  type Db,
  type Device,
  type Job,
  type RmaCase,
} from '@fleet/db';
import { rmaRefusal, rmaReturnFrom, rmaRule, rmaShipFrom, RmaTransitionRefused, type RmaState } from '@fleet/domain';
import { ApiError, invalid, notFound } from '../errors.js';
import { auditAccepted, type Caller } from './caller.js';
import { idempotentCreate, type CreateAnswer } from './idempotent-create.js';
import { checkSites } from './site-scope.js';
import { createJob } from './jobs.service.js';

export interface RmaOpenRequest {
  deviceId: string;
  failedPart: string;
  reason: string;
  vendorCaseId?: string | undefined;
}

/**
 * An operator opens a case for a device by hand, its Idempotency-Key honoured: 409 while the device has a case that
 * is not closed (naming it), or when the device was deleted or decommissioned.
 */
export async function openCase(
  db: Db,
  caller: Caller,
  req: RmaOpenRequest,
  view: (c: RmaCase) => unknown,
): Promise<{ answer: CreateAnswer; replayed: boolean }> {
  const device = await getDevice(db, req.deviceId);
  if (!device) throw invalid('body.device_id', `device ${req.deviceId} does not exist`);
  checkSites(caller.actor, [device.siteId], `device/${device.id}`, 'body.device_id');
  if (device.deletedAt || device.fleetLifecycle === 'decommissioned')
    throw new ApiError(
      'FAILED_PRECONDITION',
      `${device.name} is ${device.deletedAt ? 'deleted from the inventory' : 'decommissioned'}: no RMA case`,
    );
  return idempotentCreate(db, caller, async (tx) => {
    const opened = await openRmaCase(tx, {
      deviceId: device.id,
      failedPart: req.failedPart,
      reason: req.reason,
      vendorCaseId: req.vendorCaseId,
      openedBy: caller.actor.name,
    });
    const c = opened!.rmaCase;
    if (!opened!.opened)
      throw new ApiError('CONFLICT', `${device.name} has RMA case ${c.id} ${c.state}: one case at a time`, [
        { field: 'body.device_id', issue: `has case ${c.id}` },
      ]);
    await auditAccepted(tx, caller, 201, {
      action: 'rma.open',
      target: `device/${device.id}`,
      details: { rma_case_id: c.id, failed_part: c.failedPart, reason: c.reason, vendor_case_id: c.vendorCaseId },
    });
    return { status: 201, headers: { location: `/v1/rma/${c.id}` }, body: view(c) };
  });
}

export interface RmaPatchRequest {
  state?: RmaState | undefined;
  /** Null clears it. */
  vendorCaseId?: string | null | undefined;
  reason?: string | undefined;
}

/**
 * An operator's change of a case: its vendor case id, and a move the transition table gives operators. Shipping and
 * the return start the device's job (device.rma_ship: to rma; device.rma_return: rma → discovered) with the case's move
 * and the audit row in the job's transaction; the device must be where that lifecycle move starts (409 otherwise).
 * Asking for the state the case is in changes nothing, so a repeated request is harmless.
 */
export async function patchCase(
  db: Db,
  caller: Caller,
  id: string,
  req: RmaPatchRequest,
): Promise<{ rmaCase: RmaCase; job?: Job }> {
  const current = await getRmaCase(db, id);
  if (!current) throw notFound('RMA case', id);
  const to = req.state !== undefined && req.state !== current.state ? req.state : undefined;
  if (to && !req.reason) throw invalid('body.reason', 'give a reason for a state change');
  const refused = to && rmaRefusal(current.state, to, 'operator');
  if (refused) throw new ApiError('CONFLICT', `RMA case ${id}: ${refused}`, [{ field: 'body.state', issue: refused }]);
  const change = { to, vendorCaseId: req.vendorCaseId, mover: 'operator' as const, by: caller.actor.name };
  const kind = to ? rmaRule(current.state, to)?.job : undefined;
  try {
    if (kind) {
      const device = await caseDevice(db, current, kind);
      let moved: RmaCase | undefined;
      const { job } = await createJob(db, caller, {
        job: {
          kind,
          siteId: device.siteId,
          deviceId: device.id,
          rackId: device.rackId,
          params:
            kind === 'device.rma_ship'
              ? { reason: req.reason, return_to: 'rma', already_quarantined: true, rma_case_id: id }
              : { reason: req.reason, return_to: 'discovered', already_quarantined: false, rma_case_id: id },
        },
        action: `rma.${to}`,
        target: `device/${device.id}`,
        alsoInTransaction: async (tx, j) => {
          moved = await updateRmaCase(tx, id, { ...change, reason: req.reason, jobId: j.id });
        },
      });
      // A replayed request (its Idempotency-Key) moved the case the first time.
      return { rmaCase: moved ?? (await getRmaCase(db, id))!, job };
    }
    if (!to && req.vendorCaseId === undefined) return { rmaCase: current };
    const rmaCase = await db.transaction(async (tx) => {
      const updated = (await updateRmaCase(tx, id, { ...change, reason: req.reason }))!;
      await auditAccepted(tx, caller, 200, {
        action: to ? `rma.${to}` : 'rma.update',
        target: `device/${updated.deviceId}`,
        details: {
          rma_case_id: id,
          ...(to ? { from: current.state, to, reason: req.reason } : {}),
          ...(req.vendorCaseId !== undefined ? { vendor_case_id: req.vendorCaseId } : {}),
        },
      });
      return updated;
    });
    return { rmaCase };
  } catch (err) {
    // Another request moved the case between our read and the row lock.
    if (err instanceof RmaTransitionRefused) throw new ApiError('CONFLICT', err.message);
    throw err;
  }
}

/** Where each job's lifecycle move starts (the lifecycle table's return_to_vendor and back_from_vendor). */
const jobMoves = {
  'device.rma_ship': { from: rmaShipFrom, what: 'shipped to the vendor' },
  'device.rma_return': { from: rmaReturnFrom, what: 'taken back from the vendor' },
} as const;

/** The case's device, where the job's lifecycle move may start. */
async function caseDevice(db: Db, c: RmaCase, kind: keyof typeof jobMoves): Promise<Device> {
  const device = await getDevice(db, c.deviceId);
  if (!device) throw notFound('device', c.deviceId);
  if (device.deletedAt)
    throw new ApiError('FAILED_PRECONDITION', `device ${device.name} was deleted from the inventory`);
  const { from, what } = jobMoves[kind];
  if (!from.includes(device.fleetLifecycle))
    throw new ApiError(
      'CONFLICT',
      `${device.name} is ${device.fleetLifecycle}: only a device in ${from.join(', ')} can be ${what}`,
      [{ field: `device/${device.id}`, issue: `is ${device.fleetLifecycle}` }],
    );
  return device;
}

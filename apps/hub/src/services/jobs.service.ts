import {
  findActiveJobForDevice,
  findJobByIdempotencyKey,
  getJob,
  insertJobWithStartIntent,
  isUniqueViolation,
  notifyIntent,
  parentKinds,
  requestJobCancel,
  uniqueIndexes,
  type Db,
  type DbOrTx,
  type Job,
  type NewJob,
  type Tx,
} from '@fleet/db';
import { isTerminal, type JobState } from '@fleet/domain';
import { ApiError, notFound } from '../errors.js';
import type { OverrideQuarantine } from '../hold-override.js';
import { auditAccepted, idempotencyKeyOf, type Caller } from './caller.js';
import { checkDeviceHold, overrideAudit } from './holds.service.js';
import { checkSites } from './site-scope.js';
import { refuseClosedSites } from './sites.service.js';
import { childCancelRefusal } from './parent-jobs.service.js';

export interface JobRequest {
  job: Omit<NewJob, 'createdBy' | 'idempotencyKey' | 'requestFingerprint'>;
  action: string;
  target: string;
  /** An operator's override of the device's hold (quarantined, remediating, rma). */
  overrideQuarantine?: OverrideQuarantine | undefined;
  /** What else the request writes in the job's transaction (an RMA case's move); not run for a replay. */
  alsoInTransaction?: ((tx: Tx, job: Job) => Promise<void>) | undefined;
  /** Who the job is by when not the caller: the requester of an approved two-person request. */
  createdBy?: string | undefined;
  /** More for the audit row's details (the approval a job was made under). */
  auditDetails?: Record<string, unknown> | undefined;
}

/** The 409 for a key reused with another request; `earlier` names what the key was first used for. */
export function reusedIdempotencyKey(key: string, earlier: string): ApiError {
  return new ApiError('CONFLICT', `Idempotency-Key ${key} was already used for a different request (${earlier})`, [
    { field: 'header.Idempotency-Key', issue: 'reused with a different request' },
  ]);
}

/** The job an earlier request with this key created, if any; a different request under the key is a 409. */
export async function earlierJob(
  db: Db,
  actor: string,
  key: string | undefined,
  print: string,
): Promise<Job | undefined> {
  if (!key) return undefined;
  const existing = await findJobByIdempotencyKey(db, actor, key);
  if (existing && existing.requestFingerprint !== print) throw reusedIdempotencyKey(key, `job ${existing.id}`);
  return existing;
}

/**
 * Records a job, its start intent and the audit row in one transaction, and wakes the
 * workflow agent. Repeating a request with the same Idempotency-Key returns the
 * first job; the same key with another request is a conflict. A job on a held device is
 * a 409 unless its kind acts on held devices or the caller overrides the hold (audited), and so is a job on a site
 * draining for removal.
 */
export async function createJob(db: Db, caller: Caller, req: JobRequest): Promise<{ job: Job; replayed: boolean }> {
  checkSites(caller.actor, [req.job.siteId ?? null], req.target);
  const actor = caller.actor.name;
  const key = idempotencyKeyOf(caller);
  const print = caller.fingerprint;
  const replay = () => earlierJob(db, actor, key, print);
  const earlier = await replay();
  if (earlier) return { job: earlier, replayed: true };
  const overridden = req.job.deviceId
    ? await checkDeviceHold(db, req.job.kind, req.job.deviceId, req.overrideQuarantine)
    : [];
  try {
    const job = await db.transaction(async (tx) => {
      await refuseClosedSites(tx, [req.job.siteId]);
      const row = await insertJobWithStartIntent(tx, {
        ...req.job,
        createdBy: req.createdBy ?? actor,
        idempotencyKey: key ?? null,
        requestFingerprint: print,
      });
      await auditAccepted(tx, caller, 202, {
        action: req.action,
        target: req.target,
        jobId: row.id,
        details: { params: req.job.params, ...overrideAudit(req.overrideQuarantine, overridden), ...req.auditDetails },
      });
      await req.alsoInTransaction?.(tx, row);
      await notifyIntent(tx, row.id);
      return row;
    });
    return { job, replayed: false };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    if (isUniqueViolation(err, uniqueIndexes.activeJobPerDevice)) {
      const active = req.job.deviceId ? await findActiveJobForDevice(db, req.job.deviceId) : undefined;
      throw new ApiError(
        'CONFLICT',
        `${req.target} already has an active job${active ? ` ${active.id} (${active.kind})` : ''}; wait ` +
          `for it or cancel it`,
        [{ field: 'target', issue: 'device busy' }],
      );
    }
    // Two requests with the same key raced; the other one won.
    const winner = await replay();
    if (winner) return { job: winner, replayed: true };
    throw err;
  }
}

/** The kind of a child's parent job; undefined for a top-level job. */
export async function parentKindOf(db: DbOrTx, job: Job): Promise<string | undefined> {
  return job.parentId ? (await parentKinds(db, [job.parentId])).get(job.parentId) : undefined;
}

/**
 * Asks for an open job to be cancelled: the job turns `cancelling`, a cancel intent and the audit row are written in
 * one transaction. A finished job, or a child its parent's workflow drives, is a 409.
 */
export async function cancelJob(db: Db, caller: Caller, id: string): Promise<{ job: Job; parentKind?: string }> {
  const job = await getJob(db, id);
  if (!job) throw notFound('job', id);
  if (isTerminal(job.state as JobState))
    throw new ApiError('FAILED_PRECONDITION', `job ${id} already ${job.state}; nothing to cancel`);
  const parentKind = await parentKindOf(db, job);
  const refusal = childCancelRefusal(job, parentKind);
  if (refusal) throw refusal;
  const updated = await db.transaction(async (tx) => {
    const row = await requestJobCancel(tx, id);
    await auditAccepted(tx, caller, 202, { action: 'job.cancel', target: `job/${id}`, jobId: id });
    return row ?? (await getJob(tx, id))!;
  });
  return { job: updated, ...(parentKind ? { parentKind } : {}) };
}

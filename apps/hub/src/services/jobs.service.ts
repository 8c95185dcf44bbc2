import {
  findActiveJobForDevice,
  findJobByIdempotencyKey,
  insertJobWithStartIntent,
  isUniqueViolation,
  notifyIntent,
  uniqueIndexes,
  type Db,
  type Job,
  type NewJob,
} from '@fleet/db';
import { ApiError } from '../errors.js';
import { auditAccepted, idempotencyKeyOf, type Caller } from './caller.js';

export interface JobRequest {
  job: Omit<NewJob, 'createdBy' | 'idempotencyKey' | 'requestFingerprint'>;
  action: string;
  target: string;
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
 * first job; the same key with another request is a conflict.
 */
export async function createJob(db: Db, caller: Caller, req: JobRequest): Promise<{ job: Job; replayed: boolean }> {
  const actor = caller.actor.name;
  const key = idempotencyKeyOf(caller);
  const print = caller.fingerprint;
  const replay = () => earlierJob(db, actor, key, print);
  const earlier = await replay();
  if (earlier) return { job: earlier, replayed: true };
  try {
    const job = await db.transaction(async (tx) => {
      const row = await insertJobWithStartIntent(tx, {
        ...req.job,
        createdBy: actor,
        idempotencyKey: key ?? null,
        requestFingerprint: print,
      });
      await auditAccepted(tx, caller, 202, {
        action: req.action,
        target: req.target,
        jobId: row.id,
        details: { params: req.job.params },
      });
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

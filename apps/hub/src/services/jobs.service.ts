import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import {
  findActiveJobForDevice,
  findJobByIdempotencyKey,
  insertJobWithStartIntent,
  notifyIntent,
  type Db,
  type Job,
  type NewJob,
} from '@fleet/db';
import { ApiError, invalid } from '../errors.js';
import { auditAccepted } from '../plugins/audit.js';

export interface JobRequest {
  job: Omit<NewJob, 'createdBy' | 'idempotencyKey' | 'requestFingerprint'>;
  action: string;
  target: string;
}

const UNIQUE_VIOLATION = '23505';

/** The request's Idempotency-Key and its fingerprint (same key + other request = conflict). */
export function idempotencyOf(request: FastifyRequest): { key: string | undefined; print: string } {
  const key = request.headers['idempotency-key'];
  if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > 200)) {
    throw invalid('header.Idempotency-Key', 'must be 1 to 200 characters');
  }
  const print = createHash('sha256')
    .update(JSON.stringify([request.method, request.routeOptions.url, request.params, request.body ?? null]))
    .digest('hex');
  return { key, print };
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
export async function createJob(
  db: Db,
  request: FastifyRequest,
  req: JobRequest,
): Promise<{ job: Job; replayed: boolean }> {
  const actor = request.actor!.name;
  const { key, print } = idempotencyOf(request);
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
      await auditAccepted(tx, request, 202, {
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
    const pgErr =
      (err as { cause?: { code?: string; constraint?: string } }).cause ??
      (err as { code?: string; constraint?: string });
    if (pgErr.code !== UNIQUE_VIOLATION) throw err;
    if (pgErr.constraint === 'jobs_one_active_per_device') {
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

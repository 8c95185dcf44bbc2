import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getJob, listJobs, requestJobCancel, type Db } from '@fleet/db';
import { JobKind, JobState, isTerminal } from '@fleet/domain';
import { ApiError } from '../errors.js';
import { auditAccepted } from '../plugins/audit.js';
import { decodeCursor, encodeCursor, limitSchema, repeated } from '../pagination.js';
import { parse } from '../validation.js';
import { jobView, type ViewContext } from '../views.js';

const uuid = z.string().uuid('must be a UUID');

const JobQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    state: repeated(JobState),
    kind: repeated(JobKind),
    device_id: repeated(uuid),
    site_id: repeated(z.string().min(1)),
  })
  .strict();

export function jobRoutes(app: FastifyInstance, db: Db, views: ViewContext): void {
  app.get('/v1/jobs', { config: { role: 'viewer' } }, async (request) => {
    const q = parse(JobQuery, request.query, 'query');
    const after = decodeCursor(q.cursor, z.tuple([z.string().datetime(), uuid]));
    const rows = await listJobs(db, {
      limit: q.limit + 1,
      ...(after ? { after: { createdAt: new Date(after[0]), id: after[1] } } : {}),
      ...(q.state ? { state: q.state } : {}),
      ...(q.kind ? { kind: q.kind } : {}),
      ...(q.device_id ? { deviceId: q.device_id } : {}),
      ...(q.site_id ? { siteId: q.site_id } : {}),
    });
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    return {
      items: page.map((j) => jobView(j, views)),
      next_cursor: rows.length > q.limit && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : null,
    };
  });

  app.get('/v1/jobs/:id', { config: { role: 'viewer' } }, async (request) => {
    const id = parse(uuid, (request.params as { id: string }).id, 'path.id');
    const job = await getJob(db, id);
    if (!job) throw new ApiError('NOT_FOUND', `job ${id} does not exist`);
    return jobView(job, views);
  });

  app.post('/v1/jobs/:id/cancel', { config: { role: 'operator' } }, async (request, reply) => {
    const id = parse(uuid, (request.params as { id: string }).id, 'path.id');
    const job = await getJob(db, id);
    if (!job) throw new ApiError('NOT_FOUND', `job ${id} does not exist`);
    if (isTerminal(job.state as JobState)) {
      throw new ApiError('FAILED_PRECONDITION', `job ${id} already ${job.state}; nothing to cancel`);
    }
    const updated = await db.transaction(async (tx) => {
      const row = await requestJobCancel(tx, id);
      await auditAccepted(tx, request, 202, { action: 'job.cancel', target: `job/${id}`, jobId: id });
      return row ?? (await getJob(tx, id))!;
    });
    return reply.status(202).header('location', `/v1/jobs/${id}`).send(jobView(updated, views));
  });
}

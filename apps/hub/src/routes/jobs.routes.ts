import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { childCounts, getJob, listJobs, requestJobCancel, type Db } from '@fleet/db';
import { JobKind, JobState, isTerminal } from '@fleet/domain';
import { ApiError } from '../errors.js';
import { auditAccepted } from '../plugins/audit.js';
import { decodeCursor, encodeCursor, limitSchema, repeated } from '../pagination.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { jobView, type ViewContext } from '../views.js';

const uuid = z.string().uuid('must be a UUID');
const IdParam = z.object({ id: uuid }).strict();

const JobQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    state: repeated(JobState),
    kind: repeated(JobKind),
    device_id: repeated(uuid),
    site_id: repeated(z.string().min(1)),
    parent_id: repeated(uuid),
  })
  .strict();

export function jobRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, views: ViewContext): void {
  defineRoute(
    app,
    doc,
    { method: 'GET', url: '/v1/jobs', tag: 'jobs', summary: 'List jobs, newest first (served from Postgres; never touches Temporal)', role: 'viewer', query: JobQuery, success: [200, '{items, next_cursor}'], errors: [400] },
    async ({ query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.string().datetime(), uuid]));
      const rows = await listJobs(db, {
        limit: q.limit + 1,
        ...(after ? { after: { createdAt: new Date(after[0]), id: after[1] } } : {}),
        ...(q.state ? { state: q.state } : {}),
        ...(q.kind ? { kind: q.kind } : {}),
        ...(q.device_id ? { deviceId: q.device_id } : {}),
        ...(q.site_id ? { siteId: q.site_id } : {}),
        ...(q.parent_id ? { parentId: q.parent_id } : {}),
      });
      const page = rows.slice(0, q.limit);
      const last = page[page.length - 1];
      const counts = await childCounts(db, page.filter((j) => !j.deviceId).map((j) => j.id));
      return {
        items: page.map((j) => jobView(j, views, counts.get(j.id))),
        next_cursor: rows.length > q.limit && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : null,
      };
    },
  );

  defineRoute(
    app,
    doc,
    { method: 'GET', url: '/v1/jobs/:id', tag: 'jobs', summary: 'One job: state, timestamps, progress, result, error and its Temporal UI link', role: 'viewer', params: IdParam, success: [200, 'The job'], errors: [400, 404] },
    async ({ params }) => {
      const job = await getJob(db, params.id);
      if (!job) throw new ApiError('NOT_FOUND', `job ${params.id} does not exist`);
      const counts = job.deviceId ? undefined : (await childCounts(db, [job.id])).get(job.id) ?? {};
      return jobView(job, views, counts);
    },
  );

  defineRoute(
    app,
    doc,
    { method: 'POST', url: '/v1/jobs/:id/cancel', tag: 'jobs', summary: 'Ask for a job to be cancelled (intent): 202 with the job, now cancelling', role: 'operator', params: IdParam, success: [202, 'The job'], errors: [400, 404, 409] },
    async ({ request, reply, params }) => {
      const job = await getJob(db, params.id);
      if (!job) throw new ApiError('NOT_FOUND', `job ${params.id} does not exist`);
      if (isTerminal(job.state as JobState)) throw new ApiError('FAILED_PRECONDITION', `job ${params.id} already ${job.state}; nothing to cancel`);
      const updated = await db.transaction(async (tx) => {
        const row = await requestJobCancel(tx, params.id);
        await auditAccepted(tx, request, 202, { action: 'job.cancel', target: `job/${params.id}`, jobId: params.id });
        return row ?? (await getJob(tx, params.id))!;
      });
      return reply.status(202).header('location', `/v1/jobs/${params.id}`).send(jobView(updated, views));
    },
  );
}

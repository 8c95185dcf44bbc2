import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { childCounts, getJob, listJobs, parentKinds, type Db, type Job } from '@fleet/db';
import { JobKind, JobState } from '@fleet/domain';
import { ApiError } from '../errors.js';
import { callerOf } from '../services/caller.js';
import { cancelJob, parentKindOf } from '../services/jobs.service.js';
import { decodeCursor, cursorPage, limitSchema, repeated } from '../pagination.js';
import { IdParam, uuid } from '../params.js';
import { scopedSiteFilter } from '../services/site-scope.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { jobAccepted, JobPage, JobView, jobView, type ViewContext } from '../views.js';

const JobQuery = z
  .object({
    limit: limitSchema,
    cursor: z.string().optional(),
    state: repeated(JobState),
    kind: repeated(JobKind),
    device_id: repeated(uuid).describe('Every job on these devices, children of rack sequences and batches included'),
    site_id: repeated(z.string().min(1)),
    rack_id: repeated(uuid).describe(
      'Jobs recorded against these racks: their rack sequences and rack batches (and remediation and RMA jobs of ' +
        'their devices); top-level only unless parent_id is given',
    ),
    parent_id: repeated(uuid).describe(
      "These parents' children (a rack sequence's or batch's device jobs, a campaign's device updates). " +
        'Without parent_id or device_id only top-level jobs are listed',
    ),
  })
  .strict();

/** The kind of the parent of each child in `page`, one query for the page. */
async function parentKindsOf(db: Db, page: Job[]): Promise<Map<string, string>> {
  return parentKinds(
    db,
    page.flatMap((j) => (j.parentId ? [j.parentId] : [])),
  );
}

export function jobRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, views: ViewContext): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/jobs',
      tag: 'jobs',
      summary:
        'List top-level jobs (parents and single jobs), newest first by created_at then id (served from ' +
        "Postgres; never touches Temporal); parent_id lists a parent's children, device_id every job on a " +
        'device',
      role: 'viewer',
      sites: 'scoped',
      query: JobQuery,
      success: { status: 200, description: 'Jobs, newest first', body: JobPage },
      errors: [400],
    },
    async ({ request, query: q }) => {
      const after = decodeCursor(q.cursor, z.tuple([z.string().datetime(), uuid]));
      const siteIds = scopedSiteFilter(request.actor!, q.site_id, 'query.site_id');
      const rows = await listJobs(db, {
        limit: q.limit + 1,
        ...(after ? { after: { createdAt: new Date(after[0]), id: after[1] } } : {}),
        ...(q.state ? { state: q.state } : {}),
        ...(q.kind ? { kind: q.kind } : {}),
        ...(q.device_id ? { deviceId: q.device_id } : {}),
        ...(siteIds ? { siteId: siteIds } : {}),
        ...(q.rack_id ? { rackId: q.rack_id } : {}),
        ...(q.parent_id ? { parentId: q.parent_id } : {}),
        topLevel: !q.parent_id && !q.device_id,
      });
      const { page, nextCursor } = cursorPage(rows, q.limit, (last) => [last.createdAt.toISOString(), last.id]);
      const [counts, parents] = await Promise.all([
        childCounts(
          db,
          page.filter((j) => !j.deviceId).map((j) => j.id),
        ),
        parentKindsOf(db, page),
      ]);
      return {
        items: page.map((j) => jobView(j, views, counts.get(j.id), j.parentId ? parents.get(j.parentId) : undefined)),
        next_cursor: nextCursor,
      };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/jobs/:id',
      tag: 'jobs',
      summary:
        'One job: state, timestamps, progress, result, error and the workflow that runs it (workflow_id, ' +
        "links.temporal_ui): a rack sequence's child runs in its parent's workflow, a batch parent has " +
        'none (null)',
      role: 'viewer',
      sites: 'scoped',
      params: IdParam,
      success: { status: 200, description: 'The job', body: JobView },
      errors: [400, 404],
    },
    async ({ params }) => {
      const job = await getJob(db, params.id);
      if (!job) throw new ApiError('NOT_FOUND', `job ${params.id} does not exist`);
      const counts = job.deviceId ? undefined : ((await childCounts(db, [job.id])).get(job.id) ?? {});
      return jobView(job, views, counts, await parentKindOf(db, job));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/jobs/:id/cancel',
      tag: 'jobs',
      summary:
        'Ask for a job to be cancelled (intent): 202 with the job, now cancelling. A batch cancels its ' +
        'children; a child of a rack sequence or campaign is 409 naming the parent to cancel instead (its ' +
        "parent's workflow drives it)",
      role: 'operator',
      sites: 'scoped',
      params: IdParam,
      success: jobAccepted('The job'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params }) => {
      const { job: updated, parentKind } = await cancelJob(db, callerOf(request), params.id);
      return reply
        .status(202)
        .header('location', `/v1/jobs/${params.id}`)
        .send(jobView(updated, views, undefined, parentKind));
    },
  );
}

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getApproval, listPendingApprovals, type Db } from '@fleet/db';
import { ApprovalPage, ApprovalView, approvalView } from '../approvals/views.js';
import { notFound } from '../errors.js';
import { cursorPage, decodeCursor, limitSchema } from '../pagination.js';
import { IdParam } from '../params.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { approve, reject } from '../services/approvals.service.js';
import { callerOf } from '../services/caller.js';
import { jobAccepted, jobView, type ViewContext } from '../views.js';

const DecisionBody = z
  .object({ reason: z.string().trim().min(1, 'give a reason').max(2000).describe('Kept in the audit log') })
  .strict();

/** Requests two-person rules hold, and their decisions (docs/security.md, "Two-person rules"). */
export function approvalRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, views: ViewContext): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/approvals',
      tag: 'approvals',
      summary:
        'Pending approvals (not yet expired), oldest first: requests a two-person rule holds for a second person',
      role: 'viewer',
      query: z.object({ limit: limitSchema, cursor: z.string().optional() }).strict(),
      success: { status: 200, description: 'Pending approvals, oldest first', body: ApprovalPage },
    },
    async ({ query }) => {
      const after = decodeCursor(query.cursor, z.tuple([z.iso.datetime(), z.uuid()]));
      const rows = await listPendingApprovals(db, {
        limit: query.limit + 1,
        after: after && [new Date(after[0]), after[1]],
      });
      const { page, nextCursor } = cursorPage(rows, query.limit, (last) => [last.createdAt.toISOString(), last.id]);
      return { items: page.map(approvalView), next_cursor: nextCursor };
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/approvals/:id',
      tag: 'approvals',
      summary: 'One approval, whatever its state (pending, approved, rejected, expired)',
      role: 'viewer',
      params: IdParam,
      success: { status: 200, description: 'The approval', body: ApprovalView },
    },
    async ({ params }) => {
      const approval = await getApproval(db, params.id);
      if (!approval) throw notFound('approval', params.id);
      return approvalView(approval);
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/approvals/:id/approve',
      tag: 'approvals',
      summary:
        'Approve a held request (intent): by another person than its requester (403 naming the rule) holding the ' +
        "role the job's kind needs; the request is checked again now (guards, holds, busy devices) and its job, " +
        'intent and audit rows written with the decision in one transaction. 409 once decided or expired',
      role: 'operator',
      params: IdParam,
      body: DecisionBody,
      success: jobAccepted('The job the approval made (Location: /v1/jobs/{id}); by the requester'),
      errors: [400, 404, 409],
    },
    async ({ request, reply, params, body }) => {
      const job = await approve(db, callerOf(request), params.id, body.reason);
      return reply.status(202).header('location', `/v1/jobs/${job.id}`).send(jobView(job, views));
    },
  );

  defineRoute(
    app,
    doc,
    {
      method: 'POST',
      url: '/v1/approvals/:id/reject',
      tag: 'approvals',
      summary:
        'Reject a held request: no job is made. The requester may withdraw their own. 409 once decided or expired',
      role: 'operator',
      params: IdParam,
      body: DecisionBody,
      success: { status: 200, description: 'The rejected approval', body: ApprovalView },
      errors: [400, 404, 409],
    },
    async ({ request, params, body }) => approvalView(await reject(db, callerOf(request), params.id, body.reason)),
  );
}

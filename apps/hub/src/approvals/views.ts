import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Approval } from '@fleet/db';
import { JobKind } from '@fleet/domain';
import { twoPersonRules } from '../config.js';
import type { Reply } from '../route.js';
import type { Outcome } from '../services/approvals.service.js';
import { JobView, jobView, pageOf, timestamp, uuid, type ViewContext } from '../views.js';

export const ApprovalView = z
  .object({
    id: uuid,
    rule: z.enum(twoPersonRules),
    job_kind: JobKind,
    /** What the job would act on: device/<id>, rack/<id>. */
    target: z.string(),
    /** The request as it was sent; the job is made from it again on approval. */
    input: z.record(z.string(), z.unknown()),
    requested_by: z.string(),
    /** expired: still undecided when expires_at passed; it can no longer be approved. */
    state: z.enum(['pending', 'approved', 'rejected', 'expired']),
    created_at: timestamp,
    expires_at: timestamp,
    decided_by: z.string().nullable(),
    decided_at: timestamp.nullable(),
    decision_reason: z.string().nullable(),
    /** The job the approval made. */
    job_id: uuid.nullable(),
  })
  .meta({ id: 'Approval' });
export const ApprovalPage = pageOf(ApprovalView, 'ApprovalPage');

export function approvalView(a: Approval): z.infer<typeof ApprovalView> {
  const expired = a.state === 'pending' && a.expiresAt <= new Date();
  return {
    id: a.id,
    rule: a.rule as z.infer<typeof ApprovalView>['rule'],
    job_kind: a.jobKind as JobKind,
    target: a.target,
    input: a.input,
    requested_by: a.requestedBy,
    state: expired ? 'expired' : a.state,
    created_at: a.createdAt.toISOString(),
    expires_at: a.expiresAt.toISOString(),
    decided_by: a.decidedBy,
    decided_at: a.decidedAt?.toISOString() ?? null,
    decision_reason: a.decisionReason,
    job_id: a.jobId,
  };
}

/** The 202 of a request a two-person rule may hold: the job, or the approval it waits for. */
export const jobOrApprovalAccepted = (description: string): Reply => ({
  status: 202,
  description:
    `${description}; when a two-person rule holds the request (docs/security.md), the pending approval instead ` +
    '(Location: /v1/approvals/{id}), which another person approves or rejects',
  body: z.union([JobView, ApprovalView]),
  headers: ['Location'],
});

/** Answers a gated service's outcome: 202 with the job or with the approval. */
export function sendOutcome(reply: FastifyReply, out: Outcome, views: ViewContext): FastifyReply {
  if ('job' in out) return reply.status(202).header('location', `/v1/jobs/${out.job.id}`).send(jobView(out.job, views));
  return reply.status(202).header('location', `/v1/approvals/${out.approval.id}`).send(approvalView(out.approval));
}

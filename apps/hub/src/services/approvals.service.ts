import { decideApproval, getApproval, insertApproval, type Approval, type Db, type Job, type Tx } from '@fleet/db';
import { jobKindTable, roleAllows, type JobKind } from '@fleet/domain';
import type { TwoPersonConfig, TwoPersonRule } from '../config.js';
import { ApiError, notFound } from '../errors.js';
import { auditAccepted, type Caller } from './caller.js';
import { gatedActions } from './gated-actions.js';

/** What a gated request asks for, as an approval keeps it: the service is called again with `input` on approval. */
export interface HeldRequest {
  rule: TwoPersonRule;
  jobKind: JobKind;
  target: string;
  input: Record<string, unknown>;
}

/** What a gated service answers: the job it made, or the approval its request waits for. */
export type Outcome = { job: Job } | { approval: Approval };

/** The job-creation options an approval adds: who the job is by, the decision written in its transaction. */
export interface JobOptions {
  createdBy?: string | undefined;
  auditDetails?: Record<string, unknown> | undefined;
  alsoInTransaction?: ((tx: Tx, job: Job) => Promise<void>) | undefined;
}

/**
 * Where a gated service (one whose action a two-person rule may cover) turns once it has checked the request: `pass`
 * either holds the request for a second person (answers the approval) or lets it through to the job with `options`.
 * The same service code runs for the request and again for its approval, so the approved action is checked and
 * made exactly as a direct one.
 */
export interface Gate {
  pass(
    db: Db,
    caller: Caller,
    held: HeldRequest | undefined,
  ): Promise<{ approval: Approval } | { options: JobOptions }>;
}

/** The two-person-rule 403: the message names the rule. */
function twoPersonRefusal(rule: string, message: string): ApiError {
  return new ApiError('PERMISSION_DENIED', `two-person rule ${rule}: ${message}`, [
    { field: 'actor', issue: `two-person rule ${rule}` },
  ]);
}

/** A request's gate: held when its rule is on (the approval and the audit row in one transaction), else through. */
export function requestGate(config: TwoPersonConfig): Gate {
  return {
    async pass(db, caller, held) {
      if (!held || !config.rules[held.rule]) return { options: {} };
      const approval = await db.transaction(async (tx) => {
        const row = await insertApproval(tx, {
          rule: held.rule,
          jobKind: held.jobKind,
          target: held.target,
          input: held.input,
          requestedBy: caller.actor.name,
          requestedRole: caller.actor.role,
          requestId: caller.requestId,
          expiresAt: new Date(Date.now() + config.approvalTtlS * 1000),
        });
        await auditAccepted(tx, caller, 202, {
          action: 'approval.request',
          target: `approval/${row.id}`,
          details: { rule: held.rule, job_kind: held.jobKind, target: held.target, input: held.input },
        });
        return row;
      });
      return { approval };
    },
  };
}

/** Why an approval can no longer be decided, or undefined while it can. */
function closed(a: Approval): string | undefined {
  if (a.state !== 'pending') return `approval ${a.id} was already ${a.state} by ${a.decidedBy ?? 'someone'}`;
  if (a.expiresAt <= new Date()) return `approval ${a.id} expired at ${a.expiresAt.toISOString()}`;
  return undefined;
}

/** The checks every decision makes: the approval is open, and the decider is another person. */
async function decidable(db: Db, caller: Caller, id: string, verb: 'approve' | 'reject'): Promise<Approval> {
  const approval = await getApproval(db, id);
  if (!approval) throw notFound('approval', id);
  const why = closed(approval);
  if (why) throw new ApiError('FAILED_PRECONDITION', why);
  if (verb === 'approve' && approval.requestedBy === caller.actor.name)
    throw twoPersonRefusal(
      approval.rule,
      `${caller.actor.name} requested ${approval.jobKind} on ${approval.target}; another person must approve it`,
    );
  const needed = jobKindTable[approval.jobKind as JobKind].role;
  if (!caller.actor.role || !roleAllows(caller.actor.role, needed))
    throw new ApiError(
      'PERMISSION_DENIED',
      `deciding on ${approval.jobKind} needs the ${needed} role; token ${caller.actor.name} has ${caller.actor.role}`,
    );
  return approval;
}

/** Runs a gated service again with an approval's input under the given gate. */
export type Runner = (db: Db, caller: Caller, gate: Gate, input: Record<string, unknown>) => Promise<Outcome>;

/**
 * A second person approves: the held request runs again through its service (guards, holds and conflicts checked
 * now), and its job, intent, audit rows and the approval's decision are written in one transaction (a decision that
 * lost a race rolls the job back). The job is by the requester; the audit rows name the approver.
 */
export async function approve(db: Db, caller: Caller, id: string, reason: string): Promise<Job> {
  const approval = await decidable(db, caller, id, 'approve');
  const run = (gatedActions as Partial<Record<string, Runner>>)[approval.rule];
  if (!run) throw new ApiError('FAILED_PRECONDITION', `approval ${id} is for ${approval.rule}, which no action runs`);
  // An approver's Idempotency-Key is no key of the requester's job.
  const approver: Caller = { ...caller, idempotencyKey: undefined };
  const gate: Gate = {
    pass: async (_db, _caller, held) => {
      if (held?.rule !== approval.rule || held.target !== approval.target)
        throw new ApiError('FAILED_PRECONDITION', `approval ${id} no longer matches its request`);
      return {
        options: {
          createdBy: approval.requestedBy,
          auditDetails: { approval: { id, rule: approval.rule, requested_by: approval.requestedBy, reason } },
          alsoInTransaction: async (tx, job) => {
            const decided = await decideApproval(tx, id, {
              state: 'approved',
              decidedBy: caller.actor.name,
              reason,
              jobId: job.id,
            });
            if (!decided) throw new ApiError('FAILED_PRECONDITION', `approval ${id} was decided or expired meanwhile`);
            await auditAccepted(tx, approver, 202, {
              action: 'approval.approve',
              target: `approval/${id}`,
              jobId: job.id,
              details: { rule: approval.rule, requested_by: approval.requestedBy, reason },
            });
          },
        },
      };
    },
  };
  const out = await run(db, approver, gate, approval.input);
  if (!('job' in out)) throw new Error('an approved request was held again');
  caller.audited = approver.audited;
  return out.job;
}

/** A second person (or the requester, withdrawing it) rejects a held request; no job is made. */
export async function reject(db: Db, caller: Caller, id: string, reason: string): Promise<Approval> {
  await decidable(db, caller, id, 'reject');
  return db.transaction(async (tx) => {
    const decided = await decideApproval(tx, id, { state: 'rejected', decidedBy: caller.actor.name, reason });
    if (!decided) throw new ApiError('FAILED_PRECONDITION', `approval ${id} was decided or expired meanwhile`);
    await auditAccepted(tx, caller, 200, {
      action: 'approval.reject',
      target: `approval/${id}`,
      details: { rule: decided.rule, requested_by: decided.requestedBy, reason },
    });
    return decided;
  });
}

/**
 * The campaign-approval rule: the person who created a campaign may not approve its rollout (403 naming the rule).
 */
export function checkCampaignApprover(config: TwoPersonConfig, caller: Caller, campaign: Job): void {
  if (config.rules['campaign.approve'] && campaign.createdBy === caller.actor.name)
    throw twoPersonRefusal(
      'campaign.approve',
      `${caller.actor.name} created firmware campaign ${campaign.id}; another person must approve it`,
    );
}

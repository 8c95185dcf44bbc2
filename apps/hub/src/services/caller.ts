import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { insertAudit, type DbOrTx } from '@fleet/db';
import type { Role } from '@fleet/domain';
import { invalid } from '../errors.js';

/**
 * A request as services see it: who sends it (the token's name and role), the request id its audit row carries, and
 * what its Idempotency-Key covers. Routes make it from the Fastify request (`callerOf`); services never see that.
 */
export interface Caller {
  /** `sites`: the sites the token is limited to (null: every site); services check targets with checkSites. */
  actor: { name: string; role: Role | null; sites: readonly string[] | null };
  requestId: string;
  /** The route, e.g. `POST /v1/sites`: what an idempotent create records its answer under. */
  action: string;
  /** The Idempotency-Key header as sent; `idempotencyKeyOf` checks it. */
  idempotencyKey: string | string[] | undefined;
  /** sha256 of the route, params and JSON body: the same key with another request is a conflict. */
  fingerprint: string;
  /** Set once a service wrote the request's audit row in its transaction; the audit hook then writes none. */
  audited: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

/** The request's Caller, made once per request (the audit hook reads `audited` from it). */
export function callerOf(request: FastifyRequest): Caller {
  // A raw body (a firmware upload) is a stream, not part of the fingerprint; no such route honours a key.
  const body = request.routeOptions.config.bodyType === 'application/json' ? (request.body ?? null) : null;
  request.caller ??= {
    actor: {
      name: request.actor?.name ?? 'anonymous',
      role: request.actor?.role ?? null,
      sites: request.actor?.sites ?? null,
    },
    requestId: String(request.id),
    action: `${request.method} ${request.routeOptions.url}`,
    idempotencyKey: request.headers['idempotency-key'],
    fingerprint: createHash('sha256')
      .update(JSON.stringify([request.method, request.routeOptions.url, request.params, body]))
      .digest('hex'),
    audited: false,
  };
  return request.caller;
}

/** The caller's Idempotency-Key, if it sent one; 400 unless it is 1 to 200 characters. */
export function idempotencyKeyOf(caller: Caller): string | undefined {
  const key = caller.idempotencyKey;
  if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > 200)) {
    throw invalid('header.Idempotency-Key', 'must be 1 to 200 characters');
  }
  return key;
}

export interface AuditFields {
  action: string;
  target?: string | undefined;
  jobId?: string | undefined;
  details?: Record<string, unknown> | undefined;
}

/** Writes the audit row of an accepted request inside the service's transaction. */
export async function auditAccepted(
  tx: DbOrTx,
  caller: Caller,
  statusCode: number,
  fields: AuditFields,
): Promise<void> {
  await insertAudit(tx, {
    actor: caller.actor.name,
    role: caller.actor.role,
    action: fields.action,
    target: fields.target ?? null,
    jobId: fields.jobId ?? null,
    requestId: caller.requestId,
    outcome: 'accepted',
    statusCode,
    details: fields.details ?? null,
  });
  caller.audited = true;
}

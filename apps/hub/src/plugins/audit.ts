import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { insertAudit, type Db, type DbOrTx } from '@fleet/db';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the handler has written its audit row inside its own transaction. */
    audited?: boolean;
  }
}

const mutating = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface AuditFields {
  action: string;
  target?: string | undefined;
  jobId?: string | undefined;
  details?: Record<string, unknown> | undefined;
}

/** Writes the audit row of an accepted request inside the handler's transaction. */
export async function auditAccepted(
  tx: DbOrTx,
  request: FastifyRequest,
  statusCode: number,
  fields: AuditFields,
): Promise<void> {
  await insertAudit(tx, {
    actor: request.actor?.name ?? 'anonymous',
    role: request.actor?.role ?? null,
    action: fields.action,
    target: fields.target ?? null,
    jobId: fields.jobId ?? null,
    requestId: String(request.id),
    outcome: 'accepted',
    statusCode,
    details: fields.details ?? null,
  });
  request.audited = true;
}

/**
 * Every mutating request leaves an audit row: accepted ones write theirs in the same
 * transaction as their change; rejected ones (401, 403, 400, 409, ...) are recorded here.
 */
export function registerAudit(app: FastifyInstance, db: Db): void {
  // onSend, not onResponse: the row is written before the client sees the answer.
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    if (!mutating.has(request.method) || request.audited) return payload;
    try {
      await insertAudit(db, {
        actor: request.actor?.name ?? 'anonymous',
        role: request.actor?.role ?? null,
        action: `${request.method} ${request.routeOptions.url ?? request.url}`,
        target: request.url,
        requestId: String(request.id),
        outcome: reply.statusCode < 400 ? 'accepted' : 'rejected',
        statusCode: reply.statusCode,
        details: null,
      });
    } catch (err) {
      request.log.error({ err }, 'could not write audit row');
    }
    return payload;
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { insertAudit, type Db } from '@fleet/db';

const mutating = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every mutating request leaves an audit row: accepted ones write theirs in the same
 * transaction as their change (services/caller.ts); the rest (401, 403, 400, 409, replays, ...) are recorded here.
 */
export function registerAudit(app: FastifyInstance, db: Db): void {
  // onSend, not onResponse: the row is written before the client sees the answer.
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    if (!mutating.has(request.method) || request.caller?.audited) return payload;
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

import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  findIdempotentAnswer,
  lockIdempotencyKey,
  storeIdempotentAnswer,
  type Db,
  type IdempotentAnswer,
  type Tx,
} from '@fleet/db';
import { idempotencyOf, reusedIdempotencyKey } from './jobs.service.js';

/** What a create answers: its status, the headers worth replaying, and the body. */
export interface CreateAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Runs a create that makes no job in one transaction, honouring its Idempotency-Key: the same
 * actor, key and request get the first answer again (with `idempotent-replayed: true`) and
 * nothing is created twice; the key with another request is a 409. Requests with one key are
 * serialised by a transaction lock, so of two racing the second replays the first.
 */
export async function idempotentCreate(
  db: Db,
  request: FastifyRequest,
  reply: FastifyReply,
  create: (tx: Tx) => Promise<CreateAnswer>,
): Promise<FastifyReply> {
  const { key, print } = idempotencyOf(request);
  const send = (a: CreateAnswer, replayed: boolean) =>
    reply
      .status(a.status)
      .headers({ ...a.headers, ...(replayed ? { 'idempotent-replayed': 'true' } : {}) })
      .send(a.body);
  if (!key) return send(await db.transaction(create), false);
  const actor = request.actor!.name;
  const outcome = await db.transaction(
    async (tx): Promise<{ earlier: IdempotentAnswer } | { answer: CreateAnswer }> => {
      await lockIdempotencyKey(tx, actor, key);
      const earlier = await findIdempotentAnswer(tx, actor, key);
      if (earlier) return { earlier };
      const answer = await create(tx);
      // Stored as JSON, so a replay carries exactly what this answer serialises to.
      const response = JSON.parse(JSON.stringify(answer.body)) as unknown;
      await storeIdempotentAnswer(tx, actor, key, {
        action: `${request.method} ${request.routeOptions.url}`,
        requestFingerprint: print,
        statusCode: answer.status,
        headers: answer.headers,
        response,
      });
      return { answer };
    },
  );
  if ('answer' in outcome) return send(outcome.answer, false);
  const { earlier } = outcome;
  if (earlier.requestFingerprint !== print) throw reusedIdempotencyKey(key, earlier.action);
  return send({ status: earlier.statusCode, headers: earlier.headers, body: earlier.response }, true);
}

import {
  findIdempotentAnswer,
  lockIdempotencyKey,
  storeIdempotentAnswer,
  type Db,
  type IdempotentAnswer,
  type Tx,
} from '@fleet/db';
import { idempotencyKeyOf, type Caller } from './caller.js';
import { reusedIdempotencyKey } from './jobs.service.js';

/** What a create answers: its status, the headers worth replaying, and the body. */
export interface CreateAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** What a replay answers when it must differ from the body (a secret shown once is left out); the body otherwise. */
  stored?: unknown;
}

/**
 * Runs a create that makes no job in one transaction, honouring its Idempotency-Key: the same
 * actor, key and request get the first answer again (`replayed`) and nothing is created twice;
 * the key with another request is a 409. Requests with one key are serialised by a transaction
 * lock, so of two racing the second replays the first.
 */
export async function idempotentCreate(
  db: Db,
  caller: Caller,
  create: (tx: Tx) => Promise<CreateAnswer>,
): Promise<{ answer: CreateAnswer; replayed: boolean }> {
  const key = idempotencyKeyOf(caller);
  if (!key) return { answer: await db.transaction(create), replayed: false };
  const actor = caller.actor.name;
  const outcome = await db.transaction(
    async (tx): Promise<{ earlier: IdempotentAnswer } | { answer: CreateAnswer }> => {
      await lockIdempotencyKey(tx, actor, key);
      const earlier = await findIdempotentAnswer(tx, actor, key);
      if (earlier) return { earlier };
      const answer = await create(tx);
      // Stored as JSON, so a replay carries exactly what this answer serialises to.
      const response = JSON.parse(JSON.stringify(answer.stored ?? answer.body)) as unknown;
      await storeIdempotentAnswer(tx, actor, key, {
        action: caller.action,
        requestFingerprint: caller.fingerprint,
        statusCode: answer.status,
        headers: answer.headers,
        response,
      });
      return { answer };
    },
  );
  if ('answer' in outcome) return { answer: outcome.answer, replayed: false };
  const { earlier } = outcome;
  if (earlier.requestFingerprint !== caller.fingerprint) throw reusedIdempotencyKey(key, earlier.action);
  return { answer: { status: earlier.statusCode, headers: earlier.headers, body: earlier.response }, replayed: true };
}

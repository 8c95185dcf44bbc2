import { randomUUID } from 'node:crypto';

/**
 * The Idempotency-Key header of a mutation: the operator's own (to retry a command safely) or a fresh one per
 * command, so a request the client resends never starts a second job.
 */
export function idempotencyHeaders(key: string | undefined): { 'Idempotency-Key': string } {
  return { 'Idempotency-Key': key ?? `fleetctl-${randomUUID()}` };
}

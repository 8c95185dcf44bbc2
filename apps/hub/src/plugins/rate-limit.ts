import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

export interface RateLimitOptions {
  /** Requests a caller may make per second, sustained. */
  perSecond: number;
  /** Requests a caller may make at once after being idle (the bucket's size). */
  burst: number;
  /** Callers tracked at once; the least recently seen go first (a forgotten caller starts with a full bucket). */
  maxCallers?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Who a request counts against: its bearer token (by a digest, so no token sits in memory as text), else its address.
 * Unknown tokens count too, so a flood of guesses is throttled before each one costs a Postgres lookup.
 */
function callerOf(request: FastifyRequest): string {
  const auth = request.headers.authorization;
  if (auth) return `t:${createHash('sha256').update(auth).digest('base64url').slice(0, 22)}`;
  return `ip:${request.ip}`;
}

/**
 * A token bucket per caller on every authenticated route, in this hub process: with N replicas behind a balancer a
 * caller may get up to N times the rate (docs/security.md). Over the limit: 429 RESOURCE_EXHAUSTED with Retry-After.
 * Runs first, before authentication, so a refused request costs no database work.
 */
export function registerRateLimit(app: FastifyInstance, opts: RateLimitOptions): void {
  const maxCallers = opts.maxCallers ?? 100_000;
  const buckets = new Map<string, Bucket>();
  app.addHook('onRequest', async (request, reply) => {
    if (!request.routeOptions.config.role) return;
    const key = callerOf(request);
    const now = performance.now();
    let bucket = buckets.get(key);
    if (bucket) {
      buckets.delete(key); // re-inserted below: the map's order is least recently seen first
      bucket.tokens = Math.min(opts.burst, bucket.tokens + ((now - bucket.at) / 1000) * opts.perSecond);
      bucket.at = now;
    } else {
      if (buckets.size >= maxCallers) buckets.delete(buckets.keys().next().value!);
      bucket = { tokens: opts.burst, at: now };
    }
    buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    const retryS = Math.ceil((1 - bucket.tokens) / opts.perSecond);
    void reply.header('retry-after', String(retryS));
    throw new ApiError(
      'RESOURCE_EXHAUSTED',
      `rate limit: at most ${opts.perSecond} requests a second (bursts of ${opts.burst}) per token; ` +
        `retry in ${retryS} s`,
    );
  });
}

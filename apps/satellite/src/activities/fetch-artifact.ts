import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { FirmwareActivities } from '@fleet/domain';
import { ArtifactFetchError, type ArtifactFailureReason } from '../artifacts/artifact-errors.js';
import type { ArtifactCache } from '../artifacts/artifact-cache.js';

export interface ArtifactActivityDeps {
  artifacts: ArtifactCache;
}

/** What a fetch attempt heartbeats: how much of the artifact it has received (resumed bytes included). */
export interface FetchArtifactHeartbeat {
  digest: string;
  bytes: number;
  size: number;
}

const codeFor: Record<ArtifactFailureReason, string> = {
  config: 'FAILED_PRECONDITION',
  invalid: 'INVALID_ARGUMENT',
  not_found: 'NOT_FOUND',
  unauthorized: 'UNAUTHENTICATED',
  size_mismatch: 'FAILED_PRECONDITION',
  digest_mismatch: 'INTERNAL',
  unavailable: 'UNAVAILABLE',
};

/** Heartbeats at most this often: progress arrives per network chunk. */
const heartbeatEveryMs = 1_000;

/**
 * fetchArtifact: makes a package available in the site cache by digest. Heartbeats the bytes
 * received; cancellation stops the transfer (the partial file stays); a retried attempt resumes
 * where the last one stopped. Errors are ApplicationFailures typed by job error code, retryable
 * only when another attempt can help (transfer broke off, hub down, bytes corrupted in transit).
 */
export function createFetchArtifactActivity(deps: ArtifactActivityDeps): Pick<FirmwareActivities, 'fetchArtifact'> {
  return {
    async fetchArtifact({ digest, size }) {
      const ctx = Context.current();
      let lastBeat = 0;
      const onProgress = (bytes: number) => {
        if (Date.now() - lastBeat < heartbeatEveryMs) return;
        lastBeat = Date.now();
        ctx.heartbeat({ digest, bytes, size } satisfies FetchArtifactHeartbeat);
      };
      try {
        const lease = await deps.artifacts.acquire(digest, size, { signal: ctx.cancellationSignal, onProgress });
        lease.release();
        return { path: lease.path, fetchedBytes: lease.fetchedBytes };
      } catch (err) {
        if (!(err instanceof ArtifactFetchError)) throw err;
        throw ApplicationFailure.create({
          type: codeFor[err.reason],
          message: err.message,
          details: [{ digest, url: err.url ?? null, status: err.status ?? null, reason: err.reason }],
          nonRetryable: !err.retryable,
          cause: err,
        });
      }
    },
  };
}

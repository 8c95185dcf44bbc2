import { Context } from '@temporalio/activity';
import type { NvosTarget } from '@fleet/domain';
import type { ArtifactSource } from '../activities/firmware.js';
import { openSsh, type NvosAccess } from '../nvos/connect.js';
import { heartbeatWhile } from './heartbeat.js';

/** What an upload attempt heartbeats: bytes of the artifact the switch has acknowledged. */
export interface UploadHeartbeat {
  remotePath: string;
  bytes: number;
  size: number;
}

/**
 * Copies a package from the site cache to `remotePath` on the switch over SFTP, skipped when a
 * file of its size is there already (docs/reference/rms-behaviours.md#nvos-image-install), so a retried job does not
 * send it again. The lease keeps the cache from evicting the file meanwhile. Liveness is heartbeated on a
 * clock, since a stalled transfer reports no progress: stalls are the step timeout's business.
 */
export async function uploadArtifact(
  deps: NvosAccess & { artifacts: ArtifactSource },
  target: NvosTarget,
  artifact: { digest: string; size: number },
  remotePath: string,
): Promise<{ remotePath: string; bytes: number; uploaded: boolean }> {
  const signal = Context.current().cancellationSignal;
  const progress: UploadHeartbeat = { remotePath, bytes: 0, size: artifact.size };
  return heartbeatWhile(
    () => progress,
    async () => {
      const lease = await deps.artifacts.acquire(artifact.digest, artifact.size, { signal });
      try {
        const session = await openSsh(deps, target, signal);
        try {
          const done = await session.uploadIfDifferent(lease.path, remotePath, {
            stepTimeoutMs: deps.nvos.sftpStepTimeoutS * 1000,
            overallTimeoutMs: deps.nvos.sftpUploadTimeoutS * 1000,
            signal,
            onProgress: (bytes) => (progress.bytes = bytes),
          });
          return { remotePath, bytes: done.bytes, uploaded: done.uploaded };
        } finally {
          session.close();
        }
      } finally {
        lease.release();
      }
    },
  );
}

import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { nvosBuildIdOf, type NvosActivities } from '@fleet/domain';
import { getImage } from '@fleet/nvue';
import type { NvosAccess } from '../nvos/connect.js';
import { uploadArtifact } from '../switch/upload.js';
import { attemptLog } from './context.js';
import { toActivityFailure } from './failures.js';
import type { ArtifactSource } from './firmware.js';
import { installNvosImage } from './nvos-install.js';
import { pollImage, reading, withNvue } from './nvos-image.js';

export type NvosActivityDeps = NvosAccess & { artifacts: ArtifactSource };

/** Where NVOS looks for images to install (docs/reference/rms-behaviours.md#nvos-image-install). */
export const NVOS_IMAGE_DIR = '/host/nos-images';

export function createNvosActivities(deps: NvosActivityDeps): NvosActivities {
  return {
    readNvosImage: ({ target }) =>
      withNvue(deps, target, async (c, signal) => reading(target, await getImage(c, { signal }))),

    async stageNvosImage({ target, image }) {
      const remotePath = `${NVOS_IMAGE_DIR}/${image.fileName}`;
      try {
        nvosBuildIdOf(image.fileName);
      } catch (err) {
        // The hub admits no such name; a path built from one could leave the image folder.
        throw ApplicationFailure.create({
          type: 'INVALID_ARGUMENT',
          message: `${target.deviceId}: ${(err as Error).message}`,
          nonRetryable: true,
        });
      }
      const started = Date.now();
      try {
        const done = await uploadArtifact(deps, target, image, remotePath);
        const log = attemptLog(deps, { deviceId: target.deviceId, remotePath, digest: image.digest });
        log.info(
          { uploaded: done.uploaded, bytes: done.bytes, durationMs: Date.now() - started },
          done.uploaded ? 'image uploaded' : 'image already on the switch',
        );
        return done;
      } catch (err) {
        throw toActivityFailure(err, target.deviceId);
      }
    },

    installNvosImage: (input) => installNvosImage(deps, input),

    awaitNvosBuild: ({ target, buildId, pollIntervalS, timeoutS }) =>
      withNvue(deps, target, (c, signal) =>
        pollImage(c, signal, {
          intervalMs: pollIntervalS * 1000,
          timeoutMs: timeoutS * 1000,
          accept: (s) => {
            if (s.current === buildId) return reading(target, s);
            // NVUE answers and will not boot the build next: the switch came back without it.
            if (s.next !== buildId)
              throw verificationFailed(
                target.deviceId,
                `the switch came back running ${s.current ?? 'an unknown build'}, not ${buildId}`,
              );
            return undefined;
          },
          timedOut: (last, err) =>
            verificationFailed(
              target.deviceId,
              `not running ${buildId} after ${timeoutS} s: ` +
                (err ? `NVUE unreachable (${err.causeText})` : `still running ${last?.current ?? 'an unknown build'}`),
            ),
          heartbeat: (reachable, last) => Context.current().heartbeat({ reachable, current: last?.current ?? null }),
        }),
      ),
  };
}

function verificationFailed(deviceId: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'VERIFICATION_FAILED',
    message: `${deviceId}: ${message}`,
    details: [{ deviceId }],
    nonRetryable: true,
  });
}

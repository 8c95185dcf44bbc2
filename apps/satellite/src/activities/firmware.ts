import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { FirmwareActivities, FirmwareResultCode } from '@fleet/domain';
import { RedfishError } from '@fleet/redfish';
import { createAwaitDevicesActivity } from './await-devices.js';
import { createBmcResetActivity } from './bmc-reset.js';
import { attemptLog, openDriver, type DeviceActivityDeps } from './context.js';
import { activityCheckpoints } from '../journal/action-journal.js';
import { activateFirmwareWith, applyFirmwareWith } from './firmware-apply.js';
import { createPowerActivities } from './power.js';
import { createReadPowerActivity } from './read-power.js';
import { toActivityFailure } from './failures.js';
import { heartbeatEveryMs } from '../heartbeat-every.js';

/** Where pushed packages come from: the site's artifact cache, by digest, held until released. */
export interface ArtifactSource {
  acquire(digest: string, size: number, opts?: { signal?: AbortSignal }): Promise<{ path: string; release(): void }>;
}

export type FirmwareActivityDeps = DeviceActivityDeps & { artifacts: ArtifactSource };

/** What a push attempt records in its heartbeat, so a retry adopts the upload instead of sending it again. */
interface PushHeartbeat {
  taskUri?: string;
}

/**
 * The name the BMC sees for a push: unique per job, step and push generation, so a task scan
 * tells this job's upload apart from any other, and stable across retries of one attempt.
 */
export function bmcFileName(jobId: string, stepIndex: number, generation: number, original: string): string {
  const stem = original
    .replace(/\.[A-Za-z0-9]+$/, '')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 80);
  return `${stem}.fleet-${jobId.slice(0, 8)}-s${stepIndex}g${generation}.fwpkg`;
}

function failure(
  code: FirmwareResultCode,
  message: string,
  deviceId: string,
  nonRetryable: boolean,
  extra: Record<string, unknown> = {},
) {
  return ApplicationFailure.create({
    type: code,
    message: `${deviceId}: ${message}`,
    details: [{ deviceId, ...extra }],
    nonRetryable,
  });
}

export function createFirmwareActivities(deps: FirmwareActivityDeps): Omit<FirmwareActivities, 'fetchArtifact'> {
  const firmware = {
    async readFirmwareInventory({ target }) {
      const driver = await openDriver(deps, target);
      try {
        return { deviceId: target.deviceId, components: await driver.firmware.inventory() };
      } catch (err) {
        throw toActivityFailure(err, target.deviceId);
      } finally {
        await driver.close();
      }
    },

    async pushFirmware({ jobId, target, step, stepIndex, generation, force }) {
      const ctx = Context.current();
      const fileName = bmcFileName(jobId, stepIndex, generation, step.fileName);
      const log = attemptLog(deps, { deviceId: target.deviceId, jobId, step: step.name, fileName });
      const prior = ctx.info.heartbeatDetails as PushHeartbeat | undefined;
      if (prior?.taskUri) return { taskUri: prior.taskUri, adopted: true, fileName };
      // Leased, so the cache cannot evict the package while the BMC reads it.
      const artifact = await deps.artifacts.acquire(step.packageDigest, step.packageSize, {
        signal: ctx.cancellationSignal,
      });
      const filePath = artifact.path;
      const driver = await openDriver(deps, target).catch((err: unknown) => {
        artifact.release();
        throw err;
      });
      try {
        // Check before acting: an earlier attempt may have uploaded and died before it heard back.
        const existing = await driver.firmware.findUpdateTask(fileName);
        if (existing?.ours) {
          log.info({ taskUri: existing.taskUri, state: existing.state }, 'adopting the upload an earlier attempt made');
          ctx.heartbeat({ taskUri: existing.taskUri } satisfies PushHeartbeat);
          return { taskUri: existing.taskUri, adopted: true, fileName };
        }
        if (existing) {
          throw failure(
            'UPDATE_IN_PROGRESS',
            `another update (${existing.taskUri}) is running on the BMC`,
            target.deviceId,
            false,
            { taskUri: existing.taskUri },
          );
        }
        // One HTTP request that may take minutes: keep heartbeating while it streams.
        const everyMs = heartbeatEveryMs(ctx.info);
        const beat = setInterval(() => ctx.heartbeat({} satisfies PushHeartbeat), everyMs);
        let taskUri: string;
        try {
          ({ taskUri } = await driver.firmware.push({ filePath, fileName, targets: step.targets, force }));
        } finally {
          clearInterval(beat);
        }
        ctx.heartbeat({ taskUri } satisfies PushHeartbeat);
        log.info({ taskUri, digest: step.packageDigest }, 'package pushed');
        return { taskUri, adopted: false, fileName };
      } catch (err) {
        // The BMC refused the package itself (wrong tray, bad image): no retry will change that.
        if (err instanceof RedfishError && err.status === 400) {
          throw failure(
            'TARGET_NOT_FOUND',
            `the BMC refused ${step.fileName}: ${err.causeText}`,
            target.deviceId,
            true,
            { uri: err.uri },
          );
        }
        if (err instanceof RedfishError && err.status === 413) {
          throw failure('CLIENT_FAILURE', `${step.fileName} is larger than the BMC accepts`, target.deviceId, true, {
            uri: err.uri,
          });
        }
        throw toActivityFailure(err, target.deviceId);
      } finally {
        artifact.release();
        await driver.close();
      }
    },

    async awaitFirmwareTask({ target, taskUri, pollIntervalS, timeoutS }) {
      const ctx = Context.current();
      const driver = await openDriver(deps, target);
      try {
        const result = await driver.firmware.awaitTask(taskUri, {
          pollIntervalMs: pollIntervalS * 1000,
          timeoutMs: timeoutS * 1000,
          signal: ctx.cancellationSignal,
          onProgress: (percent, taskState) => ctx.heartbeat({ percent, taskState }),
        });
        if (result.outcome === 'succeeded')
          return { state: 'completed', messages: result.messages.map((m) => m.Message ?? m.MessageId ?? '') };
        // Interrupted = the BMC restarted under the task: nothing was staged, the push may be made again.
        if (result.taskState?.toLowerCase() === 'interrupted')
          return { state: 'lost', message: `${taskUri} was interrupted: the BMC restarted during the update` };
        const code: FirmwareResultCode =
          result.taskState?.toLowerCase() === 'exception' ? 'TASK_EXCEPTION' : 'TASK_FAILED';
        return { state: 'failed', code, message: result.failureReason ?? `task ${result.taskState}` };
      } catch (err) {
        if (err instanceof RedfishError && err.code === 'NotFound')
          return { state: 'lost', message: `${taskUri} is gone: the BMC restarted during the update` };
        if (err instanceof RedfishError && err.code === 'Timeout')
          return { state: 'failed', code: 'MONITORING_TIMEOUT', message: err.causeText };
        throw toActivityFailure(err, target.deviceId);
      } finally {
        await driver.close();
      }
    },
  } satisfies Omit<FirmwareActivities, 'fetchArtifact' | 'applyFirmware' | 'activateFirmware'>;
  const ops = {
    ...firmware,
    checkpoints: activityCheckpoints(deps.journal, () => Context.current().info),
    ...createPowerActivities(deps),
    ...createBmcResetActivity(deps),
    ...createAwaitDevicesActivity(deps),
    ...createReadPowerActivity(deps),
    async prefetch({ step }: { step: { packageDigest: string; packageSize: number } }) {
      const lease = await deps.artifacts.acquire(step.packageDigest, step.packageSize, {
        signal: Context.current().cancellationSignal,
      });
      lease.release();
    },
  };
  return {
    ...firmware,
    applyFirmware: (input) => applyFirmwareWith(ops, input),
    activateFirmware: (input) => activateFirmwareWith(ops, input),
  };
}

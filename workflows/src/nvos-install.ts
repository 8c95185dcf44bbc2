import { proxyActivities, upsertMemo } from '@temporalio/workflow';
import type {
  FirmwareActivities,
  JobMemo,
  NvosActivities,
  SwitchNvosInstallInput,
  SwitchNvosInstallResult,
} from '@fleet/domain';
import { jobMemoKey } from '@fleet/domain/workflow-safe';
import { stagedJobFailure } from './switch-stages.js';
import { StageRecorder } from './timeline.js';

const stages = ['check_image', 'fetch_artifact', 'stage_image', 'install', 'verify'] as const;

function nvosActivities(input: SwitchNvosInstallInput) {
  const { activity, timings } = input;
  const retry = {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '60s',
    maximumAttempts: activity.maximumAttempts,
    nonRetryableErrorTypes: [
      'INVALID_ARGUMENT',
      'UNAUTHENTICATED',
      'NOT_FOUND',
      'FAILED_PRECONDITION',
      'PERMISSION_DENIED',
      'HOST_KEY_MISMATCH',
      'NVOS_INSTALL_FAILED',
      'VERIFICATION_FAILED',
    ],
  };
  const heartbeatTimeout = `${activity.heartbeatTimeoutS}s`;
  const short = proxyActivities<NvosActivities>({ startToCloseTimeout: `${activity.startToCloseTimeoutS}s`, retry });
  // Transfers are bounded by the satellite's own SFTP timeouts (overall 3600 s by default).
  const transfer = proxyActivities<NvosActivities & FirmwareActivities>({
    startToCloseTimeout: '2h',
    heartbeatTimeout,
    retry,
  });
  // An install may be retried once after a reboot interrupted it, within one attempt.
  const install = proxyActivities<NvosActivities>({
    startToCloseTimeout: `${2 * (timings.installTimeoutS + timings.rebootTimeoutS)}s`,
    heartbeatTimeout,
    retry,
  });
  const reboot = proxyActivities<NvosActivities>({
    startToCloseTimeout: `${timings.rebootTimeoutS + 60}s`,
    heartbeatTimeout,
    retry,
  });
  return {
    readNvosImage: short.readNvosImage,
    fetchArtifact: transfer.fetchArtifact,
    stageNvosImage: transfer.stageNvosImage,
    installNvosImage: install.installNvosImage,
    awaitNvosBuild: reboot.awaitNvosBuild,
  };
}

/**
 * NVOS image install on one switch tray (RMS UpdateSwitchSystemImage,
 * docs/reference/rms-behaviours.md#nvos-image-install): done at once when the switch already runs the target build;
 * otherwise the image into the site cache, SFTP to the switch (skipped when the remote file matches), install up to the
 * reboot handoff, then the reboot until NVUE answers running the target build. A timeline in the memo shows each stage.
 */
export async function switchNvosInstall(input: SwitchNvosInstallInput): Promise<SwitchNvosInstallResult> {
  const act = nvosActivities(input);
  const { target, image, timings } = input;
  const rec = new StageRecorder(stages, [target.deviceId], (m) => publish(m));
  let result: SwitchNvosInstallResult | undefined;
  const publish = (m: JobMemo) => upsertMemo({ [jobMemoKey]: { ...m, ...(result ? { result: { ...result } } : {}) } });
  const finish = (r: SwitchNvosInstallResult): SwitchNvosInstallResult => {
    result = r;
    rec.emit({
      progress: {
        stage: 'done',
        percent: 100,
        message: r.status === 'installed' ? `${r.from ?? 'unknown'} → ${r.to}` : `already running ${r.to}`,
      },
    });
    return r;
  };
  const base = { deviceId: target.deviceId, to: image.buildId };

  try {
    rec.start('check_image');
    const before = await act.readNvosImage({ target });
    rec.finish('check_image', 'completed', `running ${before.current ?? 'unknown'}`);
    if (before.current === image.buildId) {
      rec.skipRemaining(`already running ${image.buildId}`);
      return finish({ ...base, from: before.current, uploaded: false, installed: false, status: 'already_current' });
    }

    rec.start('fetch_artifact');
    await act.fetchArtifact({ digest: image.digest, size: image.size });
    rec.finish('fetch_artifact', 'completed');

    rec.start('stage_image', `uploading ${image.fileName}`);
    const staged = await act.stageNvosImage({
      target,
      image: { digest: image.digest, size: image.size, fileName: image.fileName },
    });
    rec.finish(
      'stage_image',
      'completed',
      staged.uploaded ? `uploaded ${staged.bytes} bytes` : 'already on the switch',
    );

    rec.start('install', `installing ${image.buildId}`);
    const installed = await act.installNvosImage({
      target,
      fileName: image.fileName,
      buildId: image.buildId,
      pollIntervalS: timings.pollIntervalS,
      timeoutS: timings.installTimeoutS,
    });
    rec.finish(
      'install',
      'completed',
      installed.alreadyCurrent
        ? 'the switch had the build already'
        : `action ${installed.actionId ?? '?'}: handed over to the reboot`,
    );

    rec.start('verify', `waiting for ${image.buildId} after the reboot`);
    const after = await act.awaitNvosBuild({
      target,
      buildId: image.buildId,
      pollIntervalS: timings.pollIntervalS,
      timeoutS: timings.rebootTimeoutS,
    });
    rec.finish('verify', 'completed', `running ${after.current}`);
    return finish({
      ...base,
      from: before.current,
      uploaded: staged.uploaded,
      installed: !installed.alreadyCurrent,
      status: 'installed',
    });
  } catch (err) {
    throw stagedJobFailure(rec, err);
  }
}

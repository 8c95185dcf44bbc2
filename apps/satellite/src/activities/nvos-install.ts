import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { InstallNvosImageInput, InstallNvosImageResult } from '@fleet/domain';
import {
  findPendingAction,
  installImage,
  NvueError,
  waitForAction,
  type ActionProgress,
  type ActionResult,
  type NvueClient,
  type WaitForActionOptions,
} from '@fleet/nvue';
import type { NvosAccess } from '../nvos/connect.js';
import { attemptLog } from './context.js';
import { pollImage, withNvue } from './nvos-image.js';
import { heartbeatEveryMs } from '../heartbeat-every.js';

/** What an install attempt records in its heartbeat, so a retry follows the action instead of installing again. */
export interface InstallHeartbeat {
  /** The install action started and not yet seen to end in failure. */
  actionId?: string;
  /** Install actions started for this job so far. */
  installsStarted: number;
  percent?: number;
}

/** Installs started per job: the first, and one more when a reboot interrupted it (NVOS then fails the action). */
const MAX_INSTALLS = 2;

type Watched =
  { kind: 'done'; result: ActionResult } | { kind: 'failed'; error: NvueError; outageSeen: boolean } | { kind: 'lost' };

const LOST = new Error('the switch forgot the action');

/**
 * Follows an install action to the reboot handoff (success), its failure, or its loss: a
 * switch that answers 404 for the action has rebooted since (NVOS keeps actions in memory).
 */
async function watch(
  start: (opts: WaitForActionOptions) => Promise<ActionResult>,
  opts: WaitForActionOptions & { signal: AbortSignal },
): Promise<Watched> {
  const lost = new AbortController();
  let outageSeen = false;
  try {
    const result = await start({
      ...opts,
      installHandoff: true,
      signal: AbortSignal.any([opts.signal, lost.signal]),
      onProgress: (p: ActionProgress) => {
        opts.onProgress?.(p);
        if (p.unreachable?.status === 404) lost.abort(LOST);
        else if (p.unreachable) outageSeen = true;
      },
    });
    return { kind: 'done', result };
  } catch (err) {
    if (lost.signal.aborted && !opts.signal.aborted) return { kind: 'lost' };
    if (err instanceof NvueError && err.kind === 'ActionFailed') return { kind: 'failed', error: err, outageSeen };
    throw err;
  }
}

/** An image install the switch is running (NVOS runs one at a time). */
const isImageInstall = (status: string) => /install/i.test(status) && /image/i.test(status);

function installFailed(deviceId: string, message: string, issues: string[]): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'NVOS_INSTALL_FAILED',
    message: `${deviceId}: ${message}`,
    details: [{ deviceId, issues }],
    nonRetryable: true,
  });
}

/**
 * installNvosImage, idempotent across retries and worker crashes: nothing to do when the switch
 * runs the build or has it staged for the next boot; the action an earlier attempt heartbeated,
 * or an image install the switch is running, is followed rather than a second one started;
 * otherwise the install is started and its id heartbeated. An install a reboot interrupted is
 * started again once; any other failed install fails the job with the switch's issue text.
 */
export async function installNvosImage(
  access: NvosAccess,
  input: InstallNvosImageInput,
): Promise<InstallNvosImageResult> {
  const { target, fileName, buildId } = input;
  const ctx = Context.current();
  const log = attemptLog(access, { deviceId: target.deviceId, fileName, buildId });
  const prior = ctx.info.heartbeatDetails as InstallHeartbeat | undefined;
  let hb: InstallHeartbeat = {
    installsStarted: prior?.installsStarted ?? 0,
    ...(prior?.actionId ? { actionId: prior.actionId } : {}),
  };
  const beat = () => ctx.heartbeat(hb);
  const pollIntervalMs = input.pollIntervalS * 1000;
  const timeoutMs = input.timeoutS * 1000;
  // Whether the action followed was started while no worker watched it (its failure may be an interruption).
  let resumed = false;
  let lastIssues: string[] = [];

  // Liveness on a clock too: a switch that stops answering must not look like a dead worker.
  const ticker = setInterval(beat, heartbeatEveryMs(ctx.info));
  return withNvue(access, target, async (c: NvueClient, signal) => {
    for (;;) {
      const image = await pollImage(c, signal, {
        intervalMs: pollIntervalMs,
        timeoutMs,
        accept: (s) => s,
        timedOut: (_last, err) => err ?? new Error('no image state'),
        heartbeat: beat,
      });
      if (image.current === buildId || image.next === buildId) {
        log.info(
          { current: image.current, next: image.next, actionId: hb.actionId },
          'the switch runs or has staged the build',
        );
        return {
          alreadyCurrent: hb.installsStarted === 0,
          actionId: hb.actionId ?? null,
          installsStarted: hb.installsStarted,
        };
      }
      const onProgress = (p: ActionProgress) => {
        hb = { ...hb, actionId: p.actionId, ...(p.status?.percent !== undefined ? { percent: p.status.percent } : {}) };
        beat();
      };
      const progress = { pollIntervalMs, timeoutMs, signal, onProgress };
      let watched: Watched;
      const adopted = hb.actionId ?? (await findPendingAction(c, isImageInstall, { signal }));
      if (adopted) {
        log.info({ actionId: adopted }, 'following the install an earlier attempt started');
        hb = { ...hb, actionId: adopted, installsStarted: Math.max(1, hb.installsStarted) };
        resumed = true;
        watched = await watch((o) => waitForAction(c, adopted, o), progress);
      } else {
        if (hb.installsStarted >= MAX_INSTALLS)
          throw installFailed(
            target.deviceId,
            `${fileName} was installed ${hb.installsStarted} times and is still not staged`,
            lastIssues,
          );
        hb = { installsStarted: hb.installsStarted + 1 };
        log.info({ installsStarted: hb.installsStarted }, 'starting the install');
        // installImage polls at once after the POST: its first progress report heartbeats the action id.
        watched = await watch((o) => installImage(c, fileName, o), progress);
      }
      if (watched.kind === 'done') {
        log.info(
          { actionId: watched.result.actionId, rebootHandoff: watched.result.rebootHandoff },
          'install done; the switch reboots into the new image',
        );
        return { alreadyCurrent: false, actionId: watched.result.actionId, installsStarted: hb.installsStarted };
      }
      // A failure seen across a reboot, or by an attempt that does not know what happened while no worker watched, may
      // be an interruption.
      if (watched.kind === 'failed' && !watched.outageSeen && !resumed)
        throw installFailed(target.deviceId, watched.error.causeText, watched.error.issues);
      lastIssues =
        watched.kind === 'failed' ? watched.error.issues : ['the switch rebooted and forgot the install action'];
      log.warn(
        { actionId: hb.actionId, issues: lastIssues },
        'the install was interrupted; looking at the image before installing again',
      );
      hb = { installsStarted: hb.installsStarted };
      beat();
      resumed = false;
    }
  }).finally(() => clearInterval(ticker));
}

import { Context } from '@temporalio/activity';
import type { NvosTarget, SwitchActivities, SwitchFirmwareStep, SwitchInstallOutcome } from '@fleet/domain';
import {
  assertImageFilename,
  findPendingAction,
  getPlatformFirmware,
  installPlatformFirmware,
  NvueError,
  platformComponents,
  waitForAction,
  type ActionProgress,
  type ActionResult,
  type PlatformComponent,
} from '@fleet/nvue';
import type { NvosAccess } from '../nvos/connect.js';
import { permanentFailure, switchFailure } from '../switch/failures.js';
import { unlessMissing } from '../switch/nvue-outcomes.js';
import { uploadArtifact } from '../switch/upload.js';
import { attemptLog } from './context.js';
import type { ArtifactSource } from './firmware.js';
import { withNvue } from './nvos-image.js';

/** Where NVUE installs platform firmware from (test-peers item 4). */
export const FIRMWARE_DIR = '/host/fw-images';

/** What an install attempt heartbeats, so a retry follows the action instead of installing again. */
export interface FirmwareInstallHeartbeat {
  actionId: string;
  percent?: number;
}

export type SwitchFirmwareDeps = NvosAccess & { artifacts: ArtifactSource };

/** Whether an action's status text is an install of this component ("Installing bmc firmware"). */
const installsComponent = (component: PlatformComponent, status: string) =>
  /install/i.test(status) && new RegExp(`\\b${component}\\b`, 'i').test(status);

/** The NVUE component a step installs and the version it must leave installed; bad steps never reach the switch. */
function componentOf(target: NvosTarget, step: SwitchFirmwareStep): { component: PlatformComponent; version: string } {
  const component = platformComponents.find((c) => c === step.name);
  const version = step.components.find((c) => c.id === step.name)?.version;
  if (!component || !version)
    throw permanentFailure(
      'INVALID_ARGUMENT',
      target.deviceId,
      `step ${step.name} must be one of ${platformComponents.join(', ')} with its target version`,
    );
  try {
    assertImageFilename(step.fileName);
  } catch (err) {
    // A path built from such a name could leave the firmware folder.
    throw permanentFailure('INVALID_ARGUMENT', target.deviceId, (err as Error).message);
  }
  return { component, version };
}

/**
 * Switch platform firmware (RMS switch firmware, docs/reference/rms-behaviours.md#switch-platform-firmware; nvfwupd's
 * switch flow, test-peers item 4): the inventory, SFTP staging into /host/fw-images, and the NVUE install action per
 * component. Activation (a power cycle) is powerCycleSwitch.
 */
export function createSwitchFirmwareActivities(
  deps: SwitchFirmwareDeps,
): Pick<SwitchActivities, 'readSwitchFirmware' | 'stageSwitchFirmware' | 'installSwitchFirmware'> {
  return {
    readSwitchFirmware: ({ target }) =>
      withNvue(deps, target, async (c, signal) => {
        const firmware = await getPlatformFirmware(c, { signal });
        return {
          deviceId: target.deviceId,
          components: firmware.flatMap((f) => (f.actual ? [{ id: f.component, version: f.actual }] : [])),
          pending: firmware.flatMap((f) =>
            f.installed && f.installed !== f.actual ? [{ id: f.component, version: f.installed }] : [],
          ),
        };
      }),

    async stageSwitchFirmware({ target, step }) {
      componentOf(target, step);
      try {
        return await uploadArtifact(
          deps,
          target,
          { digest: step.packageDigest, size: step.packageSize },
          `${FIRMWARE_DIR}/${step.fileName}`,
        );
      } catch (err) {
        throw switchFailure(err, target.deviceId);
      }
    },

    /**
     * Installs one staged component, idempotent across retries: a component the switch already
     * has installed for the next power cycle is not installed again (unless forced), and an
     * action id in the heartbeat is followed rather than a second install started. A failed
     * action is a result with the switch's detail, not a retry.
     */
    async installSwitchFirmware({ target, step, force, pollIntervalS, timeoutS }) {
      const { component, version } = componentOf(target, step);
      const ctx = Context.current();
      const prior = ctx.info.heartbeatDetails as FirmwareInstallHeartbeat | undefined;
      const log = attemptLog(deps, { deviceId: target.deviceId, component, fileName: step.fileName });
      try {
        return await withNvue(deps, target, async (c, signal): Promise<SwitchInstallOutcome> => {
          const installed = async () =>
            (await getPlatformFirmware(c, { signal })).find((f) => f.component === component)?.installed;
          const opts = {
            pollIntervalMs: pollIntervalS * 1000,
            timeoutMs: timeoutS * 1000,
            signal,
            onProgress: (p: ActionProgress) =>
              ctx.heartbeat({
                actionId: p.actionId,
                ...(p.status?.percent !== undefined ? { percent: p.status.percent } : {}),
              } satisfies FirmwareInstallHeartbeat),
          };
          if (!prior && !force && (await installed()) === version) {
            log.info({ version }, 'already installed for the next power cycle; nothing sent');
            return { state: 'installed', installed: version, alreadyInstalled: true };
          }
          let result: ActionResult | undefined;
          try {
            // An install whose id never reached a heartbeat (its POST answer was lost, or the worker
            // died first) is followed, not started twice.
            const followed =
              prior?.actionId ?? (await findPendingAction(c, (s) => installsComponent(component, s), { signal }));
            if (followed && !prior)
              log.info({ actionId: followed }, 'following the install an earlier attempt started');
            // A switch that rebooted since has forgotten the action (404): what it has installed then decides.
            if (followed) result = await unlessMissing(waitForAction(c, followed, opts));
            if (!result && followed && (await installed()) === version)
              return { state: 'installed', installed: version, alreadyInstalled: false };
            result ??= await installPlatformFirmware(c, component, step.fileName, { ...opts, force });
          } catch (err) {
            if (err instanceof NvueError && err.kind === 'ActionFailed')
              return { state: 'failed', code: 'TASK_FAILED', message: `${component}: ${err.causeText}` };
            // Only the poll's deadline ends a wait with Timeout; a lost answer to the POST is left to a retry.
            if (err instanceof NvueError && err.kind === 'Timeout' && err.method === 'GET')
              return { state: 'failed', code: 'MONITORING_TIMEOUT', message: `${component}: ${err.causeText}` };
            throw err;
          }
          const now = await installed();
          log.info({ actionId: result.actionId, installed: now }, 'install action done');
          if (now !== version)
            return {
              state: 'failed',
              code: 'VERIFICATION_FAILED',
              message:
                `${component} reports ${now ?? 'nothing'} installed after action ${result.actionId}, ` +
                `expected ${version}`,
            };
          return { state: 'installed', installed: now, alreadyInstalled: false, actionId: result.actionId };
        });
      } catch (err) {
        throw switchFailure(err, target.deviceId);
      }
    },
  };
}

import { Context } from '@temporalio/activity';
import type { NvosTarget, SwitchActivities } from '@fleet/domain';
import type { BmcCredentials } from '@fleet/drivers';
import { factoryReset } from '@fleet/nvue';
import { SshError, type HostKeyPolicy } from '@fleet/ssh';
import { openSsh, type NvosAccess } from '../nvos/connect.js';
import { loggingInAs } from '../switch/access.js';
import { permanentFailure, switchFailure } from '../switch/failures.js';
import { unlessRefused } from '../switch/nvue-outcomes.js';
import { awaitReboot, type RebootProgress } from '../switch/reboot-wait.js';
import { previousRef, SecretStoreReadOnlyError, type SecretWriter } from '../credentials/secret-writer.js';
import { attemptLog } from './context.js';
import { withNvue } from './nvos-image.js';

/** All a factory-reset NVOS accepts (docs/reference/rms-behaviours.md#switch-factory-reset). */
export const NVOS_DEFAULT_CREDENTIALS: BmcCredentials = { username: 'admin', password: 'admin' };

const isDefault = (c: BmcCredentials) =>
  c.username === NVOS_DEFAULT_CREDENTIALS.username && c.password === NVOS_DEFAULT_CREDENTIALS.password;

/** What a reset attempt heartbeats once the request was accepted, so a retry only waits. */
export interface FactoryResetHeartbeat extends RebootProgress {
  withDefaults: boolean;
}

export interface SwitchFactoryResetDeps extends NvosAccess {
  secretWriter: SecretWriter;
}

/**
 * resetSwitchToFactoryDefault (RMS BatchResetSwitchFactoryDefault,
 * docs/reference/rms-behaviours.md#switch-factory-reset): destructive. The reset is submitted with the configured
 * credentials, or with admin/admin when the switch refuses those; it is done when admin/admin logs in over SSH after
 * the reboot (the first-login password prompt is left alone). The site's secret store then holds admin/admin under the
 * target's reference (the old value kept as `#previous`), so that the password rotation an
 * operator runs next can log in; a read-only store is reported, not an error. A switch trusted on
 * first use that comes back with a new SSH host key has that key recorded instead; a pinned one
 * fails HOST_KEY_MISMATCH until the operator pins the new key.
 */
export function createSwitchFactoryResetActivity(
  deps: SwitchFactoryResetDeps,
): Pick<SwitchActivities, 'resetSwitchToFactoryDefault'> {
  const submitAs = (target: NvosTarget, credentials: BmcCredentials) =>
    withNvue(loggingInAs(deps, credentials), target, (c, signal) => unlessRefused(factoryReset(c, { signal })));

  /**
   * Whether admin/admin logs in over SSH; `seen` gets the host key it logged in through. A
   * pinned key stays pinned; otherwise any key is accepted here but none is recorded before a
   * login succeeds, since NVOS may make new host keys on a reset (and admin/admin is no secret).
   */
  const defaultsLogIn = async (target: NvosTarget, signal: AbortSignal, seen: { fingerprint?: string }) => {
    let presented: string | undefined;
    const hostKey: HostKeyPolicy = target.hostKeyFingerprint
      ? { mode: 'pinned', sha256: target.hostKeyFingerprint }
      : { mode: 'tofu', onFirstUse: async (fingerprint) => void (presented = fingerprint) };
    try {
      (await openSsh(loggingInAs(deps, NVOS_DEFAULT_CREDENTIALS), target, signal, hostKey)).close();
      if (presented) seen.fingerprint = presented;
      return true;
    } catch (err) {
      // Down, or not reset yet (the old password still set): both mean "not yet". A wrong host key does not.
      if (err instanceof SshError && (err.retryable || err.kind === 'Auth')) return false;
      throw err;
    }
  };

  return {
    async resetSwitchToFactoryDefault({ target, timings }) {
      const ctx = Context.current();
      const ref = target.credentialRef;
      const log = attemptLog(deps, { deviceId: target.deviceId });
      try {
        const current = await deps.secrets.resolve(ref);
        let sent = ctx.info.heartbeatDetails as FactoryResetHeartbeat | undefined;
        if (!sent) {
          const withDefaults = (await submitAs(target, current)) === undefined;
          if (withDefaults && (await submitAs(target, NVOS_DEFAULT_CREDENTIALS)) === undefined) {
            throw permanentFailure(
              'FAILED_PRECONDITION',
              target.deviceId,
              `the switch refuses both the configured credentials (${ref}) and admin/admin`,
            );
          }
          sent = { sentAtMs: Date.now(), outageSeen: false, withDefaults };
          ctx.heartbeat(sent);
          log.warn({ withDefaults }, 'factory reset submitted');
        }
        const { withDefaults } = sent;
        const seen: { fingerprint?: string } = {};
        const back = await awaitReboot(sent, {
          deviceId: target.deviceId,
          back: 'admin/admin SSH login',
          isUp: () => defaultsLogIn(target, ctx.cancellationSignal, seen),
          pollMs: timings.pollIntervalS * 1000,
          maxWaitMs: timings.maxWaitS * 1000,
          details: (p): FactoryResetHeartbeat => ({ ...p, withDefaults }),
        });
        const replaced = seen.fingerprint ? await deps.knownHosts.replace(target, seen.fingerprint) : undefined;
        if (replaced)
          log.warn(
            { earlier: replaced, now: seen.fingerprint },
            'the switch came back from the reset with a new SSH host key; trusting it',
          );
        let stored = true;
        try {
          await deps.secretWriter.write({
            [ref]: NVOS_DEFAULT_CREDENTIALS,
            ...(isDefault(current) ? {} : { [previousRef(ref)]: current }),
          });
        } catch (err) {
          if (!(err instanceof SecretStoreReadOnlyError)) throw err;
          stored = false;
          log.warn(
            { credentialRef: ref },
            'the secret store cannot be written: its entry no longer matches the switch',
          );
        }
        log.info({ ...back, storedDefaultCredentials: stored }, 'factory reset done: admin/admin logs in');
        return {
          deviceId: target.deviceId,
          submittedWithDefaults: withDefaults,
          storedDefaultCredentials: stored,
          backAfterS: back.backAfterS,
        };
      } catch (err) {
        throw switchFailure(err, target.deviceId);
      }
    },
  };
}

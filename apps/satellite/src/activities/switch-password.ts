import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import {
  ownNvosCredentialHint,
  type NvosTarget,
  type SwitchActivities,
  type SwitchPasswordRotationResult,
} from '@fleet/domain';
import type { BmcCredentials } from '@fleet/drivers';
import { changePassword, getSystem } from '@fleet/nvue';
import { openSsh, type NvosAccess } from '../nvos/connect.js';
import { loggingInAs } from '../switch/access.js';
import { permanentFailure, switchFailure } from '../switch/failures.js';
import { heartbeatWhile } from '../switch/heartbeat.js';
import { unlessRefused } from '../switch/nvue-outcomes.js';
import { generatePassword } from '../credentials/password.js';
import type { PendingPasswords } from '../credentials/pending-passwords.js';
import { previousRef, type SecretWriter } from '../credentials/secret-writer.js';
import { attemptLog } from './context.js';
import { withNvue } from './nvos-image.js';

/**
 * What a rotation heartbeats: how far it got, never the password. It is progress for the
 * operator and a hint for a retry, not the record: heartbeats are throttled, so the last one
 * Temporal kept may lag behind what the attempt did. The record is the pending store on the
 * satellite's disk, written before the switch is touched.
 */
export interface RotationHeartbeat {
  phase: 'generated' | 'applied' | 'verified' | 'stored';
}

export interface SwitchPasswordDeps extends NvosAccess {
  secretWriter: SecretWriter;
  pendingPasswords: PendingPasswords;
  /** How often the applying revision is polled. */
  pollIntervalMs: number;
}

/**
 * rotateSwitchPassword (RMS UpdateSwitchSystemPassword, docs/reference/rms-behaviours.md#switch-password): the
 * satellite generates the password, keeps it in its pending store, sets it with an NVUE revision (applied, then
 * saved), proves it with an NVUE and an SSH login, and stores it in the site's secret store
 * under the same reference (the old one kept as `<ref>#previous`).
 *
 * Retries never generate a second password while one is pending: an attempt first asks which
 * password the switch takes. The pending one means an earlier attempt applied it (verify and
 * store it); the stored one means it was not applied yet (apply the pending one). An attempt
 * whose heartbeat says the switch was changed, but which finds no pending password here (the
 * earlier attempt ran on another host), stops with FAILED_PRECONDITION rather than guess.
 */
export function createSwitchPasswordActivity(deps: SwitchPasswordDeps): Pick<SwitchActivities, 'rotateSwitchPassword'> {
  const accepts = async (target: NvosTarget, credentials: BmcCredentials) =>
    (await withNvue(loggingInAs(deps, credentials), target, (c, signal) => unlessRefused(getSystem(c, { signal })))) !==
    undefined;

  /** One rotation with the stored credentials `current`; see above for what a retry does. */
  const rotate = async (target: NvosTarget, current: BmcCredentials): Promise<SwitchPasswordRotationResult> => {
    const ctx = Context.current();
    const ref = target.credentialRef;
    const owner = `${ctx.info.workflowExecution?.workflowId ?? '-'}/${ctx.info.activityId}`;
    const prior = (ctx.info.heartbeatDetails as RotationHeartbeat | undefined)?.phase;
    const changedEarlier = prior !== undefined && prior !== 'generated';
    const log = attemptLog(deps, { deviceId: target.deviceId, credentialRef: ref });
    const reached = (phase: RotationHeartbeat['phase']) => {
      ctx.heartbeat({ phase } satisfies RotationHeartbeat);
      log.info({ phase }, 'switch password rotation');
    };
    const result = (rotatedNow: boolean, verifiedWith: SwitchPasswordRotationResult['verifiedWith']) => ({
      deviceId: target.deviceId,
      username: current.username,
      rotatedNow,
      verifiedWith,
    });
    const alreadyStored = async () => {
      if (!(await accepts(target, current))) throw refused(target, current.username, 'the stored password');
      return result(false, ['nvue']);
    };

    const record = await deps.pendingPasswords.get(ref);
    if (record?.state === 'stored' && record.owner === owner) return alreadyStored();
    const pending = record?.state === 'generated' ? record.password : undefined;
    const withPassword = (password: string) => ({ username: current.username, password });

    let next: string;
    if (pending && (await accepts(target, withPassword(pending))))
      next = pending; // applied by an earlier attempt
    else {
      if (!(await accepts(target, current))) {
        if (pending) throw refused(target, current.username, 'both the stored and the pending password');
        throw changedEarlier
          ? lostElsewhere(target, current.username)
          : refused(target, current.username, 'the stored password');
      }
      // The switch takes the stored password, so a change an earlier attempt made was stored already.
      if (!pending && changedEarlier) return alreadyStored();
      next = pending ?? generatePassword();
      if (!pending) await deps.pendingPasswords.generated(ref, owner, next);
      reached('generated');
      await heartbeatWhile(
        () => ({ phase: 'generated' }) satisfies RotationHeartbeat,
        () =>
          withNvue(loggingInAs(deps, current), target, (c, signal) =>
            changePassword(c, current.username, next, { pollIntervalMs: deps.pollIntervalMs, signal }),
          ),
      );
    }
    reached('applied');

    if (!(await accepts(target, withPassword(next)))) {
      // Retryable: the next attempt finds the pending password refused and applies it again.
      throw ApplicationFailure.create({
        type: 'VERIFICATION_FAILED',
        message: `${target.deviceId}: NVUE refuses the new password of ${current.username} after the apply`,
        details: [{ deviceId: target.deviceId }],
      });
    }
    (await openSsh(loggingInAs(deps, withPassword(next)), target, ctx.cancellationSignal)).close();
    reached('verified');

    await deps.secretWriter.write({
      [ref]: withPassword(next),
      ...(current.password !== next ? { [previousRef(ref)]: current } : {}),
    });
    await deps.pendingPasswords.stored(ref, owner);
    reached('stored');
    return result(true, ['nvue', 'ssh']);
  };

  return {
    async rotateSwitchPassword({ target }) {
      try {
        // The hub refuses shared references; this guards every other path to a rotation.
        if (target.credentialRef === target.bmcCredentialRef) throw sharedWithBmc(target);
        deps.secretWriter.assertWritable();
        return await rotate(target, await deps.secrets.resolve(target.credentialRef));
      } catch (err) {
        throw switchFailure(err, target.deviceId);
      }
    },
  };
}

function refused(target: NvosTarget, user: string, which: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'UNAUTHENTICATED',
    message: `${target.deviceId}: the switch refuses ${which} of ${user} (${target.nvueUrl})`,
    details: [{ deviceId: target.deviceId, credentialRef: target.credentialRef }],
    nonRetryable: true,
  });
}

function sharedWithBmc(target: NvosTarget): ApplicationFailure {
  return permanentFailure(
    'FAILED_PRECONDITION',
    target.deviceId,
    `the NVOS credential reference ${target.credentialRef} is the device's BMC reference: writing a new ` +
      `password under it would lock the BMC logins out; ${ownNvosCredentialHint}`,
    { credentialRef: target.credentialRef },
  );
}

function lostElsewhere(target: NvosTarget, user: string): ApplicationFailure {
  return permanentFailure(
    'FAILED_PRECONDITION',
    target.deviceId,
    `an earlier attempt changed the password of ${user}, but this satellite holds no pending password for ` +
      `${target.credentialRef}: recover it from the pending store of the host that ran that attempt, or ` +
      `factory-reset the switch`,
    { credentialRef: target.credentialRef },
  );
}

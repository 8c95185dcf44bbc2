import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { BmcCredentialActivities, BmcPasswordRotationResult, BmcTarget } from '@fleet/domain';
import type { BmcCredentials } from '@fleet/drivers';
import { findAccount, readPasswordPolicy, RedfishError, setAccountPassword, type RedfishClient } from '@fleet/redfish';
import { generatePassword } from '../credentials/password.js';
import type { PendingPasswords } from '../credentials/pending-passwords.js';
import { nextRef, previousRef, type SecretWriter } from '../credentials/secret-writer.js';
import { permanentFailure, switchFailure } from '../switch/failures.js';
import { attemptLog, redfishClientFor, type DeviceActivityDeps } from './context.js';

/** What a BMC rotation heartbeats: how far it got, never the password (the record is the pending store on disk). */
export interface BmcRotationHeartbeat {
  phase: 'generated' | 'staged' | 'applied' | 'verified' | 'stored' | 'rolling_back';
}

export interface BmcPasswordDeps extends DeviceActivityDeps {
  secretWriter: SecretWriter;
  pendingPasswords: PendingPasswords;
}

/** The longest password generated, when the BMC advertises no MaxPasswordLength. */
const preferredLength = 32;

/**
 * rotateBmcPassword: the satellite generates the password and keeps it in its pending store, stages it in the site's
 * secret store as `<ref>#next` (the old one as `<ref>#previous`) before the BMC sees it, PATCHes the account's Password
 * through AccountService, proves it with a fresh Redfish session, and only then makes it current under `<ref>`.
 *
 * A login with the new password that the BMC refuses rolls back: the old password is applied again (logged in with
 * whichever of the two the BMC takes), proven by a fresh session, `<ref>#next` is dropped, and the activity fails
 * VERIFICATION_FAILED for good. Retries never generate a second password while one is pending: an attempt first
 * asks which password the BMC takes (the pending one: an earlier attempt applied it; the stored one: not yet).
 */
export function createBmcPasswordActivity(deps: BmcPasswordDeps): BmcCredentialActivities {
  const client = (target: BmcTarget, credentials: BmcCredentials, auth?: 'session') =>
    redfishClientFor(deps, target, credentials, auth);
  const using = async <T>(c: RedfishClient, op: (c: RedfishClient) => Promise<T>): Promise<T> => {
    try {
      return await op(c);
    } finally {
      await c.close();
    }
  };
  /** A fresh session login (and a read of the account) with `credentials`: false when the BMC refuses them. */
  const logsIn = async (target: BmcTarget, credentials: BmcCredentials): Promise<boolean> => {
    try {
      await using(client(target, credentials, 'session'), (c) => findAccount(c, credentials.username));
      return true;
    } catch (err) {
      if (err instanceof RedfishError && err.code === 'Unauthenticated') return false;
      throw err;
    }
  };
  const apply = (target: BmcTarget, loginAs: BmcCredentials, password: string) =>
    using(client(target, loginAs), (c) => setAccountPassword(c, loginAs.username, password));

  const rotate = async (target: BmcTarget, current: BmcCredentials): Promise<BmcPasswordRotationResult> => {
    const ctx = Context.current();
    const ref = target.credentialRef;
    const owner = `${ctx.info.workflowExecution?.workflowId ?? '-'}/${ctx.info.activityId}`;
    const log = attemptLog(deps, { deviceId: target.deviceId, credentialRef: ref });
    const reached = (phase: BmcRotationHeartbeat['phase']) => {
      ctx.heartbeat({ phase } satisfies BmcRotationHeartbeat);
      log.info({ phase }, 'BMC password rotation');
    };
    const result = (rotatedNow: boolean) => ({ deviceId: target.deviceId, username: current.username, rotatedNow });
    const as = (password: string) => ({ username: current.username, password });

    const record = await deps.pendingPasswords.get(ref);
    if (record?.state === 'stored' && record.owner === owner) {
      if (!(await logsIn(target, current))) throw refused(target, current.username, 'the stored password');
      return result(false);
    }
    const pending = record?.state === 'generated' ? record.password : undefined;

    let next: string;
    if (pending && pending !== current.password && (await logsIn(target, as(pending)))) {
      next = pending; // applied by an earlier attempt
    } else if (pending === current.password) {
      // An earlier attempt made it current and stopped before marking it stored.
      await deps.pendingPasswords.stored(ref, owner);
      return result(false);
    } else {
      if (!(await logsIn(target, current)))
        throw refused(
          target,
          current.username,
          pending ? 'both the stored and the pending password' : 'the stored password',
        );
      next = pending ?? generatePassword(await passwordLength(target, current));
      if (!pending) await deps.pendingPasswords.generated(ref, owner, next);
      reached('generated');
      await deps.secretWriter.write({ [nextRef(ref)]: as(next), [previousRef(ref)]: current });
      reached('staged');
      await apply(target, current, next);
    }
    reached('applied');

    if (!(await logsIn(target, as(next)))) {
      reached('rolling_back');
      await rollBack(target, current, next);
      await deps.secretWriter.write({ [nextRef(ref)]: null });
      await deps.pendingPasswords.discard(ref);
      log.warn({ phase: 'rolled_back' }, 'BMC refused a login with the new password; the old one is back');
      throw permanentFailure(
        'VERIFICATION_FAILED',
        target.deviceId,
        `the BMC (${target.bmcUrl}) took the new password of ${current.username} but refused a login with it; ` +
          `rolled back: the stored password is applied again and logs in`,
        { credentialRef: ref },
      );
    }
    reached('verified');

    await deps.secretWriter.write({ [ref]: as(next), [nextRef(ref)]: null, [previousRef(ref)]: current });
    await deps.pendingPasswords.stored(ref, owner);
    reached('stored');
    return result(true);
  };

  /** Puts `current` back on the BMC, logged in with whichever password it takes, and proves it. */
  const rollBack = async (target: BmcTarget, current: BmcCredentials, next: string): Promise<void> => {
    const loginAs = (await logsIn(target, current)) ? current : { username: current.username, password: next };
    try {
      await apply(target, loginAs, current.password);
    } catch (err) {
      if (!(err instanceof RedfishError && err.code === 'Unauthenticated')) throw err;
    }
    if (!(await logsIn(target, current)))
      throw permanentFailure(
        'FAILED_PRECONDITION',
        target.deviceId,
        `the BMC refused a login with the new password of ${current.username}, and the rollback to the stored ` +
          `password did not take; the new one is staged as ${nextRef(target.credentialRef)} in the secret store`,
        { credentialRef: target.credentialRef },
      );
  };

  /** The length to generate: the preferred one within what the BMC's AccountService advertises. */
  const passwordLength = async (target: BmcTarget, current: BmcCredentials): Promise<number> => {
    const policy = await using(client(target, current), readPasswordPolicy);
    return Math.max(policy.minLength ?? 0, Math.min(preferredLength, policy.maxLength ?? preferredLength));
  };

  return {
    async rotateBmcPassword({ target }) {
      try {
        deps.secretWriter.assertWritable();
        return await rotate(target, await deps.secrets.resolve(target.credentialRef));
      } catch (err) {
        throw switchFailure(err, target.deviceId);
      }
    },
  };
}

function refused(target: BmcTarget, user: string, which: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'UNAUTHENTICATED',
    message: `${target.deviceId}: the BMC refuses ${which} of ${user} (${target.bmcUrl})`,
    details: [{ deviceId: target.deviceId, credentialRef: target.credentialRef }],
    nonRetryable: true,
  });
}

import type { ActivityTimeouts, BmcTarget } from './contracts.js';
import { otherLoginsOf, type CredentialRefHolder } from './credential-refs.js';

/*
 * BMC credential rotation (docs/security.md#bmc-credential-rotation): workflows carry the device's BMC target and its
 * credential *reference*; the satellite generates the password, keeps it in its pending store and its secret store,
 * applies it through the BMC's AccountService and proves it with a fresh login.
 */

export interface BmcPasswordRotationInput {
  jobId: string;
  target: BmcTarget;
  activity: ActivityTimeouts;
}

export interface BmcPasswordRotationResult {
  deviceId: string;
  username: string;
  /** False when an earlier attempt of this activity had already made the new password current. */
  rotatedNow: boolean;
}

/** Rotation over a rack's BMCs: at most `concurrency` devices at once, each device's outcome on its child job. */
export interface RackBmcPasswordRotationInput {
  jobId: string;
  rackId: string;
  targets: BmcTarget[];
  concurrency: number;
  activity: ActivityTimeouts;
}

/** The largest `concurrency` a rack rotation takes: a rack has 18 compute and 9 switch trays and a few shelves. */
export const maxBmcRotationConcurrency = 32;
export const defaultBmcRotationConcurrency = 4;

export interface BmcCredentialActivities {
  /**
   * New password generated on the satellite, staged in the secret store as `<ref>#next` (the old one as
   * `<ref>#previous`), applied through AccountService, proven by a fresh login, then made current under `<ref>`. A
   * refused login rolls the BMC and the store back and fails VERIFICATION_FAILED, non-retryable.
   */
  rotateBmcPassword(input: { target: BmcTarget }): Promise<BmcPasswordRotationResult>;
}

/** How an operator gives a device a BMC reference of its own. */
export const ownBmcCredentialHint =
  'give each device its own reference: NetBox custom field fleet_credential_ref, or credential_ref on POST /v1/devices';

/**
 * Why rotating the BMC password of `device` would overwrite a secret another login uses, or undefined when its BMC
 * reference is its own. `users` are the other live devices that use the reference, as their BMC or NVOS reference;
 * the device's own NVOS reference may not be it either (its switch OS would be locked out).
 */
export function sharedBmcCredential(device: CredentialRefHolder, users: CredentialRefHolder[]): string | undefined {
  const ref = device.credentialRef;
  if (!ref) return `device ${device.name} has no BMC credential reference`;
  const shown = otherLoginsOf(ref, device, 'bmc', users);
  if (!shown) return undefined;
  return (
    `the BMC credential reference ${ref} of ${device.name} is also used by ${shown}: ` +
    `a rotation would replace their password; ${ownBmcCredentialHint}`
  );
}

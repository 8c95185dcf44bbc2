import type { ActivityTimeouts } from './contracts.js';
import { otherLoginsOf, type CredentialRefHolder } from './credential-refs.js';
import { kindOfNodeType } from './hardware.js';

/**
 * Where and how a satellite reaches a switch tray's NVOS: NVUE REST and SSH/SFTP (the BMC side
 * is a BmcTarget). Carries a credential *reference* only the satellite's secret store resolves.
 */
export interface NvosTarget {
  deviceId: string;
  /** NVUE REST base URL without /nvue_v1: https://10.0.0.5, or http://127.x.y.z:port for simulators. */
  nvueUrl: string;
  ssh: { host: string; port: number };
  credentialRef: string;
  /** The device's BMC reference: another protocol's login, which an NVOS credential write must never replace. */
  bmcCredentialRef?: string;
  /** Pinned SSH host key (`SHA256:<base64>`); without it the satellite trusts the first key it sees. */
  hostKeyFingerprint?: string;
}

const imageNameChars = /^[A-Za-z0-9._-]+$/;

/**
 * The build id an NVOS image installs, from its file name: NVOS accepts only `[A-Za-z0-9._-]`,
 * not hidden, and RMS infers the build as the one X.Y.Z in the name
 * (docs/reference/rms-behaviours.md#nvos-image-names): `nvos-amd64-25.02.4282.bin` → `25.02.4282`. Throws RangeError
 * saying what is wrong.
 */
export function nvosBuildIdOf(fileName: string): string {
  if (!imageNameChars.test(fileName))
    throw new RangeError(`file name ${JSON.stringify(fileName)} may contain only letters, digits, '.', '_' and '-'`);
  if (fileName.startsWith('.')) throw new RangeError(`file name ${JSON.stringify(fileName)} is hidden`);
  const found = fileName.match(/\d+\.\d+\.\d+/g) ?? [];
  if (found.length !== 1)
    throw new RangeError(
      `cannot tell the NVOS build id of ${fileName}: expected exactly one X.Y.Z, found ${found.length}`,
    );
  return found[0]!;
}

/** `host:port` or `[v6]:port` as a switch's SSH endpoint; undefined when it is neither. */
export function parseHostPort(value: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(value);
  const port = Number(m?.[3]);
  if (!m || port < 1 || port > 65535) return undefined;
  return { host: (m[1] ?? m[2])!, port };
}

/** An NVUE REST base URL: http(s), no credentials in it (those are resolved by reference). */
export function isNvueBaseUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && !u.search && !u.hash;
  } catch {
    return false;
  }
}

/** An SSH host key fingerprint as OpenSSH prints it. */
export const sshHostKeyFingerprint = /^SHA256:[A-Za-z0-9+/]{43}$/;

/** The inventory fields an NVOS operation reads. */
export interface NvosInventory {
  nodeType: string | null;
  nvosUrl: string | null;
  nvosSsh: string | null;
  nvosCredentialRef: string | null;
  credentialRef: string | null;
}

/** What a device lacks before Fleet can reach its NVOS, in words an operator can act on; empty when it can. */
export function missingForNvos(d: NvosInventory): string[] {
  return [
    ...(kindOfNodeType(d.nodeType) === 'switch' ? [] : ['switch node type']),
    ...(d.nvosUrl && isNvueBaseUrl(d.nvosUrl) ? [] : ['NVOS NVUE URL']),
    ...(d.nvosSsh && parseHostPort(d.nvosSsh) ? [] : ['NVOS SSH endpoint']),
    ...((d.nvosCredentialRef ?? d.credentialRef) ? [] : ['credential reference']),
  ];
}

/** How an operator gives a switch tray an NVOS reference of its own. */
export const ownNvosCredentialHint =
  'give the switch its own reference: NetBox custom field fleet_nvos_credential_ref, or ' +
  'nvos_credential_ref on POST /v1/devices';

/**
 * Why rotating the NVOS password of `device` would overwrite a secret something else logs in with, or undefined
 * when its NVOS reference is its own. A rotation writes the new password under the reference, so a reference that
 * falls back to the BMC's, equals any device's BMC reference, or is another switch's NVOS reference would lock
 * those logins out. `users` are the other live devices that use the reference in either role.
 */
export function sharedNvosCredential(device: CredentialRefHolder, users: CredentialRefHolder[]): string | undefined {
  const ref = device.nvosCredentialRef;
  if (!ref)
    return (
      `device ${device.name} has no NVOS credential reference of its own ` +
      `(it logs in with its BMC's${device.credentialRef ? `, ${device.credentialRef}` : ''}); ${ownNvosCredentialHint}`
    );
  const shown = otherLoginsOf(ref, device, 'nvos', users);
  if (!shown) return undefined;
  return (
    `the NVOS credential reference ${ref} of ${device.name} is also used by ${shown}: ` +
    `a rotation would replace their password; ${ownNvosCredentialHint}`
  );
}

// ---- NVOS image install (workflow input, activities, result) ----

/** An NVOS image in the catalog, as a satellite fetches it: by digest, never its bytes. */
export interface NvosImageRef {
  digest: string;
  size: number;
  fileName: string;
}

/** RMS-like NVOS install timings in seconds; tests and benches shorten them. */
export interface NvosInstallTimings {
  /** Install action and image state poll interval (NVUE actions: 5 s). */
  pollIntervalS: number;
  /** Install action budget, up to the reboot handoff. */
  installTimeoutS: number;
  /** Reboot into the new image until NVUE answers with it (nvue waitForBuild: 1200 s). */
  rebootTimeoutS: number;
}

export const defaultNvosInstallTimings: NvosInstallTimings = {
  pollIntervalS: 5,
  installTimeoutS: 1800,
  rebootTimeoutS: 1200,
};

export interface SwitchNvosInstallInput {
  jobId: string;
  target: NvosTarget;
  image: NvosImageRef & { buildId: string };
  timings: NvosInstallTimings;
  activity: ActivityTimeouts;
}

export interface SwitchNvosInstallResult {
  deviceId: string;
  /** Build running before the job (null if NVUE did not say). */
  from: string | null;
  to: string;
  /** False when the switch already held a file of the image's size. */
  uploaded: boolean;
  /** False when the switch already ran (or had staged) the target build. */
  installed: boolean;
  status: 'installed' | 'already_current';
}

export interface NvosImageReading {
  deviceId: string;
  current: string | null;
  next: string | null;
}

export interface StageNvosImageResult {
  remotePath: string;
  bytes: number;
  /** False when the remote file already had the image's size (docs/reference/rms-behaviours.md#nvos-image-install). */
  uploaded: boolean;
}

export interface InstallNvosImageInput {
  target: NvosTarget;
  fileName: string;
  buildId: string;
  pollIntervalS: number;
  timeoutS: number;
}

export interface InstallNvosImageResult {
  /** The switch ran or had staged the build already: nothing was installed by this call. */
  alreadyCurrent: boolean;
  /** The install action followed to its end (null when none was needed). */
  actionId: string | null;
  /** Install actions started for this job, across attempts. */
  installsStarted: number;
}

export interface AwaitNvosBuildInput {
  target: NvosTarget;
  buildId: string;
  pollIntervalS: number;
  timeoutS: number;
}

/** Failure types of the NVOS activities besides the shared error codes. */
export type NvosFailureType = 'NVOS_INSTALL_FAILED' | 'VERIFICATION_FAILED' | 'SFTP_STALL' | 'HOST_KEY_MISMATCH';

/** What a switch install asks of the site's satellite (types only; the satellite implements them). */
export interface NvosActivities {
  readNvosImage(input: { target: NvosTarget }): Promise<NvosImageReading>;
  /** SFTP to /host/nos-images/<fileName>, skipped when the remote file has the image's size. */
  stageNvosImage(input: { target: NvosTarget; image: NvosImageRef }): Promise<StageNvosImageResult>;
  /** Installs a staged image up to the reboot handoff; never installs twice across retries. */
  installNvosImage(input: InstallNvosImageInput): Promise<InstallNvosImageResult>;
  /** Waits out the reboot until NVUE answers running `buildId` (VERIFICATION_FAILED otherwise). */
  awaitNvosBuild(input: AwaitNvosBuildInput): Promise<NvosImageReading>;
}

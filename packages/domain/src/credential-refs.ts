/** A device's credential references, as the rotation checks read them. */
export interface CredentialRefHolder {
  name: string;
  credentialRef: string | null;
  nvosCredentialRef: string | null;
  /** A switch tray's NVUE endpoint: without an NVOS reference of its own, its NVOS logs in with the BMC's. */
  nvosUrl?: string | null;
}

/**
 * The logins, other than the one being rotated (`rotating`), that use `ref`: the device's own other login and every
 * login of `users` (the other live devices using the reference), named for an operator; undefined when there are
 * none. A rotation writes its new password under the reference, so every one of them would be locked out.
 */
export function otherLoginsOf(
  ref: string,
  device: CredentialRefHolder,
  rotating: 'bmc' | 'nvos',
  users: CredentialRefHolder[],
): string | undefined {
  const roles = [
    ...(rotating === 'nvos' && device.credentialRef === ref ? [`the BMC of ${device.name}`] : []),
    ...(rotating === 'bmc' && (device.nvosCredentialRef ?? (device.nvosUrl ? device.credentialRef : null)) === ref
      ? [`the NVOS of ${device.name}`]
      : []),
    ...users.flatMap((u) => [
      ...(u.credentialRef === ref ? [`the BMC of ${u.name}`] : []),
      ...(u.nvosCredentialRef === ref ? [`the NVOS of ${u.name}`] : []),
    ]),
  ];
  if (!roles.length) return undefined;
  return roles.length > 5 ? `${roles.slice(0, 5).join(', ')} and ${roles.length - 5} more` : roles.join(', ');
}

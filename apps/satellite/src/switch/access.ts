import type { BmcCredentials } from '@fleet/drivers';
import type { NvueTlsOptions } from '@fleet/nvue';
import type { NvosAccess } from '../nvos/connect.js';

/** The same access logging in with other credentials: a rotation's new password, or NVOS's defaults. */
export function loggingInAs(access: NvosAccess, credentials: BmcCredentials): NvosAccess {
  return { ...access, secrets: { resolve: async () => credentials } };
}

export type SwitchTls = NvosAccess['nvos']['tls'] & Pick<NvueTlsOptions, 'caPem' | 'clientCertPem' | 'clientKeyPem'>;

/** The same access over other TLS settings: presenting a client identity, or trusting a candidate CA only. */
export function overTls(access: NvosAccess, tls: SwitchTls): NvosAccess {
  return { ...access, nvos: { ...access.nvos, tls } };
}

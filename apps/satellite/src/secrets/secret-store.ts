import type { BmcCredentials } from '@fleet/drivers';

/**
 * Resolves a credential reference to the secret, at the site only. A vault provider
 * implements the same interface. Secrets never leave the satellite process.
 */
export interface SecretStore {
  resolve(ref: string): Promise<BmcCredentials>;
}

export class UnknownCredentialError extends Error {
  constructor(readonly ref: string) {
    super(`no credentials for reference ${ref} in this site's secret store`);
    this.name = 'UnknownCredentialError';
  }
}

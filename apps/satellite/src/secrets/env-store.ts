import { UnknownCredentialError, type SecretStore } from './secret-store.js';

/**
 * Credentials from the satellite's environment: reference `bmc/default` under prefix
 * FLEET_SECRET is read from FLEET_SECRET_BMC_DEFAULT as `username:password`.
 */
export function createEnvSecretStore(prefix: string, env: NodeJS.ProcessEnv): SecretStore {
  return {
    resolve: async (ref) => {
      const value = env[`${prefix}_${ref.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`];
      const i = value?.indexOf(':') ?? -1;
      if (!value || i <= 0) throw new UnknownCredentialError(ref);
      return { username: value.slice(0, i), password: value.slice(i + 1) };
    },
  };
}

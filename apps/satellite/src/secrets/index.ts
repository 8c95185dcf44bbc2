import type { SatelliteConfig } from '../config.js';
import { createEnvSecretStore } from './env-store.js';
import { createFileSecretStore } from './file-store.js';
import type { SecretStore } from './secret-store.js';

export * from './secret-store.js';

export function createSecretStore(config: SatelliteConfig['secrets'], env: NodeJS.ProcessEnv): SecretStore {
  return config.provider === 'file' ? createFileSecretStore(config.path) : createEnvSecretStore(config.prefix, env);
}

import type { BmcCredentials } from '@fleet/drivers';
import type { SatelliteConfig } from '../config.js';
import { updateJsonObject } from './json-file.js';

/** The site's secret store cannot be written (the env provider); activities fail FAILED_PRECONDITION on it. */
export class SecretStoreReadOnlyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretStoreReadOnlyError';
  }
}

/** Writes to the site's secret store; reading stays with SecretStore.resolve. */
export interface SecretWriter {
  /** Throws SecretStoreReadOnlyError when the store cannot be written: checked before a switch is changed. */
  assertWritable(): void;
  /** Sets, or with null removes, entries in one atomic rewrite. */
  write(entries: Record<string, BmcCredentials | null>): Promise<void>;
}

/** Where a replaced secret is kept, for an operator rolling back by hand. */
export const previousRef = (ref: string): string => `${ref}#previous`;

/** Where a rotation stages the password it is about to apply, so the store has it before the device does. */
export const nextRef = (ref: string): string => `${ref}#next`;

/**
 * The writer for the configured store. The file store's JSON is rewritten atomically with mode
 * 0600, and its reader picks the change up without a restart. The environment cannot be written.
 */
export function createSecretWriter(config: SatelliteConfig['secrets']): SecretWriter {
  if (config.provider === 'env') {
    const refuse = (): never => {
      throw new SecretStoreReadOnlyError(
        `the site's secret store reads the environment (${config.prefix}_*) and cannot be written; credential ` +
          `rotation needs the file provider`,
      );
    };
    return { assertWritable: refuse, write: async () => refuse() };
  }
  return {
    assertWritable: () => undefined,
    write: (entries) =>
      updateJsonObject(config.path, (all) => {
        for (const [ref, value] of Object.entries(entries)) {
          if (value) all[ref] = { username: value.username, password: value.password };
          else delete all[ref];
        }
      }),
  };
}

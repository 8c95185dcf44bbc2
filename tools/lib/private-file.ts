import { chmodSync, writeFileSync } from 'node:fs';

/**
 * Writes a file only its owner can read (0600): tokens, secrets, configs holding passwords. writeFileSync's
 * `mode` applies only when it creates the file, so a file an earlier version left world-readable is chmod-ed too.
 */
export function writePrivateFile(file: string, content: string): void {
  writeFileSync(file, content, { mode: 0o600 });
  chmodSync(file, 0o600);
}

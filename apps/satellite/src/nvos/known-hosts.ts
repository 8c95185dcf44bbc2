import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { NvosTarget } from '@fleet/domain';
import { normaliseFingerprint, type HostKeyPolicy } from '@fleet/ssh';

interface KnownHost {
  /** `SHA256:<base64>` of the key first seen. */
  fingerprint: string;
  /** The endpoint it was seen on, for the operator reading the file. */
  host: string;
  firstSeenAt: string;
}

/**
 * SSH host keys of this site's switches, trusted on first use: a JSON file keyed by device
 * id (`<dataDir>/nvos-known-hosts.json`, `{ "<deviceId>": { fingerprint, host, firstSeenAt } }`).
 * A device with a pinned key in the inventory never uses it. A switch that later presents
 * another key fails with HOST_KEY_MISMATCH until an operator deletes its entry (after a
 * tray swap or an NVOS reinstall) or pins the new key; a factory reset Fleet ran replaces it.
 */
export class KnownHosts {
  private entries: Promise<Record<string, KnownHost>> | undefined;
  /** Writes one at a time, each the whole file: atomically renamed into place. */
  private writes: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {}

  async policyFor(target: NvosTarget): Promise<HostKeyPolicy> {
    if (target.hostKeyFingerprint) return { mode: 'pinned', sha256: target.hostKeyFingerprint };
    const known = (await this.load())[target.deviceId]?.fingerprint;
    return { mode: 'tofu', ...(known ? { known } : {}), onFirstUse: (fingerprint) => this.record(target, fingerprint) };
  }

  private load(): Promise<Record<string, KnownHost>> {
    this.entries ??= readFile(this.file, 'utf8').then(
      (text) => JSON.parse(text) as Record<string, KnownHost>,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return {};
        this.entries = undefined;
        throw err;
      },
    );
    return this.entries;
  }

  private async record(target: NvosTarget, fingerprint: string): Promise<void> {
    const entries = await this.load();
    const earlier = entries[target.deviceId];
    // Two first connections racing: the second must see the same key.
    if (earlier) {
      if (normaliseFingerprint(earlier.fingerprint) === fingerprint) return;
      throw new Error(`${target.deviceId} presented ${fingerprint}, but ${earlier.fingerprint} was recorded first`);
    }
    await this.store(target, fingerprint);
  }

  /**
   * Trusts a new key for the device in place of the one recorded: only for a key change Fleet
   * caused and then logged in through (a factory reset may make new host keys). Returns the key
   * it replaced, if it was another.
   */
  async replace(target: NvosTarget, fingerprint: string): Promise<string | undefined> {
    const earlier = (await this.load())[target.deviceId]?.fingerprint;
    if (earlier && normaliseFingerprint(earlier) === fingerprint) return undefined;
    await this.store(target, fingerprint);
    return earlier;
  }

  private async store(target: NvosTarget, fingerprint: string): Promise<void> {
    const entries = await this.load();
    entries[target.deviceId] = {
      fingerprint,
      host: `${target.ssh.host}:${target.ssh.port}`,
      firstSeenAt: new Date().toISOString(),
    };
    const write = this.writes.then(async () => {
      await mkdir(dirname(this.file), { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      await writeFile(tmp, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
      await rename(tmp, this.file);
    });
    this.writes = write.catch(() => undefined);
    await write;
  }
}

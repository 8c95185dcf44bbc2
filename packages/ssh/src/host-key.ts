import { createHash } from 'node:crypto';

/**
 * How the switch's host key is checked: `pinned` to a known SHA-256 fingerprint, or `tofu`
 * (trust on first use): the first key seen is reported through `onFirstUse` (to be stored)
 * and from then on the policy behaves as pinned to it; `known` is the stored fingerprint.
 */
export type HostKeyPolicy =
  | { mode: 'pinned'; sha256: string }
  | { mode: 'tofu'; known?: string; onFirstUse(fingerprintSha256: string): Promise<void> };

/** OpenSSH's fingerprint form, `SHA256:<base64 without padding>`, of a wire-format public key. */
export function fingerprintOf(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** Accepts `SHA256:<base64>`, bare base64, or 64 hex digits (colons allowed); returns the `SHA256:` form. */
export function normaliseFingerprint(fp: string): string {
  const v = fp.trim().replace(/^SHA256:/i, '');
  const hex = v.replace(/:/g, '');
  if (/^[0-9a-fA-F]{64}$/.test(hex)) return `SHA256:${Buffer.from(hex, 'hex').toString('base64').replace(/=+$/, '')}`;
  if (/^[A-Za-z0-9+/]{43}=?$/.test(v)) return `SHA256:${v.replace(/=+$/, '')}`;
  throw new RangeError('a host key fingerprint must be SHA256:<base64> or 64 hex digits');
}

// What a TOFU policy object has learned in this process, so reusing it behaves as pinned at once.
const learned = new WeakMap<HostKeyPolicy, string>();

export type HostKeyCheck = { ok: true; fingerprint: string } | { ok: false; expected: string; actual: string };

/** Checks a presented key against the policy, recording it on first use. */
export async function checkHostKey(policy: HostKeyPolicy, keyBlob: Buffer): Promise<HostKeyCheck> {
  const actual = fingerprintOf(keyBlob);
  const expected = policy.mode === 'pinned' ? policy.sha256 : (policy.known ?? learned.get(policy));
  if (expected === undefined && policy.mode === 'tofu') {
    await policy.onFirstUse(actual);
    learned.set(policy, actual);
    return { ok: true, fingerprint: actual };
  }
  const want = normaliseFingerprint(expected!);
  return want === actual ? { ok: true, fingerprint: actual } : { ok: false, expected: want, actual };
}

import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';

export interface HostKey {
  /** OpenSSH private key text (the only Ed25519 format ssh2's server reads). */
  privateKey: string;
  /** `ssh-ed25519 AAAA…`, as in known_hosts. */
  publicKey: string;
  /** `SHA256:<base64>`, as `ssh-keygen -l` prints it. */
  sha256: string;
}

// RFC 8410: an Ed25519 PKCS#8 DER key is this prefix followed by the 32-byte seed.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const KEY_TYPE = 'ssh-ed25519';

/**
 * A deterministic Ed25519 host key: the same seed always gives the same key, so tests
 * and the demo can pin a simulated switch's fingerprint before it starts. The key is
 * derived in memory at start-up; no key material is kept in the repository.
 */
export function hostKeyFor(seed: string): HostKey {
  const secret = createHash('sha256').update(`nvos-sim-host-key\0${seed}`).digest();
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, secret]), format: 'der', type: 'pkcs8' });
  const pub = createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(-32);
  const blob = Buffer.concat([sshString(KEY_TYPE), sshString(pub)]);
  return {
    privateKey: openSshPrivateKey(blob, secret, pub),
    publicKey: `${KEY_TYPE} ${blob.toString('base64')}`,
    sha256: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`,
  };
}

/** The unencrypted `openssh-key-v1` container (OpenSSH PROTOCOL.key) holding one key. */
function openSshPrivateKey(publicBlob: Buffer, seed: Buffer, pub: Buffer): string {
  const check = seed.subarray(0, 4);
  let secret = Buffer.concat([
    check,
    check,
    sshString(KEY_TYPE),
    sshString(pub),
    sshString(Buffer.concat([seed, pub])),
    sshString(''),
  ]);
  // Padded with 1, 2, 3… to the cipher block size, which is 8 for "none".
  const pad = (8 - (secret.length % 8)) % 8;
  secret = Buffer.concat([secret, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0'),
    sshString('none'),
    sshString('none'),
    sshString(''),
    uint32(1),
    sshString(publicBlob),
    sshString(secret),
  ]);
  return armor('OPENSSH PRIVATE KEY', body);
}

/** PEM-style armour around base64 lines, as OpenSSH writes its key container. */
function armor(label: string, body: Buffer): string {
  const lines = body.toString('base64').match(/.{1,70}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`, ''].join('\n');
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function sshString(v: string | Buffer): Buffer {
  const data = typeof v === 'string' ? Buffer.from(v) : v;
  return Buffer.concat([uint32(data.length), data]);
}

import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where a satellite keeps switch mTLS material, per domain, as RMS does
 * (docs/reference/rms-behaviours.md#switch-certificates): `<switchCertRoot>/<domain>/{ca.pem, client.pem, client.key}`
 * is installed on the switches (the CA their API trusts for clients, and their own certificate and key), and
 * `<clientTlsRoot>/<domain>/{client.pem, client.key}` is the identity the satellite presents.
 */
export interface CertificateRoots {
  switchCertRoot: string;
  clientTlsRoot: string;
}

export interface DomainMaterial {
  caPem: string;
  /** The switch's certificate and key. */
  switchIdentity: { certPem: string; keyPem: string };
  /** The satellite's client certificate and key. */
  clientIdentity: { certPem: string; keyPem: string };
}

/** Site material that is missing or unusable: an operator has to fix the certificate directory. */
export class CertificateMaterialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CertificateMaterialError';
  }
}

/** RMS domains name folders; nothing that could leave the root. */
export const isDomainName = (domain: string): boolean => /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(domain);

async function pem(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new CertificateMaterialError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

async function identity(dir: string): Promise<{ certPem: string; keyPem: string }> {
  // Both read at once, but the error names client.pem first whichever read fails first: one answer per fault.
  const [cert, key] = await Promise.allSettled([pem(join(dir, 'client.pem')), pem(join(dir, 'client.key'))]);
  if (cert.status === 'rejected') throw cert.reason;
  if (key.status === 'rejected') throw key.reason;
  const [certPem, keyPem] = [cert.value, key.value];
  let matches: boolean;
  try {
    matches = new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch (err) {
    throw new CertificateMaterialError(`${dir}: client.pem or client.key is not PEM (${(err as Error).message})`);
  }
  if (!matches) throw new CertificateMaterialError(`${dir}: client.key is not the key of client.pem`);
  return { certPem, keyPem };
}

/** The identity the satellite presents to a domain's switches. */
export function readClientIdentity(
  clientTlsRoot: string,
  domain: string,
): Promise<{ certPem: string; keyPem: string }> {
  return identity(join(clientTlsRoot, domain));
}

export async function readDomainMaterial(roots: CertificateRoots, domain: string): Promise<DomainMaterial> {
  const dir = join(roots.switchCertRoot, domain);
  const [caPem, switchIdentity, clientIdentity] = await Promise.all([
    pem(join(dir, 'ca.pem')),
    identity(dir),
    identity(join(roots.clientTlsRoot, domain)),
  ]);
  return { caPem, switchIdentity, clientIdentity };
}

/** Switch-side ids that change with the material, so "already installed" means this very material. */
export function certificateIds(domain: string, m: DomainMaterial): { certificateId: string; caCertificateId: string } {
  const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);
  return {
    certificateId: `fleet-${domain}-${short(m.switchIdentity.certPem)}`,
    caCertificateId: `fleet-${domain}-ca-${short(m.caPem)}`,
  };
}

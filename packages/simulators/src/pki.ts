import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// A private CA for the dev stack, the tests and the simulated BMCs' HTTPS, made with the openssl CLI (Node can verify
// certificates but not issue them). P-256 keys: a certificate takes a few milliseconds. Production brings its own PKI
// (docs/security.md).

export interface CertificateAuthority {
  certFile: string;
  keyFile: string;
  certPem: string;
}

export interface IssuedCertificate {
  certFile: string;
  keyFile: string;
  certPem: string;
  /** SHA-256 fingerprint, colon-separated upper-case hex (what a pin names). */
  fingerprint: string;
}

/** The names a server on this machine is reached by. */
export const loopback = { dns: ['localhost'], ip: ['127.0.0.1'] };

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function newKey(keyFile: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', keyFile]);
  chmodSync(keyFile, 0o600);
}

/** A self-signed CA valid for `days`, its key readable by the owner only. */
export function createCa(dir: string, name: string, days = 30): CertificateAuthority {
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.pem`);
  newKey(keyFile);
  openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    keyFile,
    '-days',
    String(days),
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-out',
    certFile,
  ]);
  return { certFile, keyFile, certPem: readPem(certFile) };
}

/** A CA made elsewhere (a site's), from its PEM certificate and key files. */
export function loadCa(certFile: string, keyFile: string): CertificateAuthority {
  return { certFile, keyFile, certPem: readPem(certFile) };
}

/**
 * A server (and client) certificate signed by `ca` for the given DNS names and IP addresses.
 * `extendedKeyUsage` covers both ends so one certificate can serve and present itself (mTLS).
 */
export function issueCertificate(
  ca: CertificateAuthority,
  dir: string,
  name: string,
  san: { dns?: string[]; ip?: string[] },
  days = 30,
): IssuedCertificate {
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.pem`);
  const csrFile = join(dir, `${name}.csr`);
  const extFile = join(dir, `${name}.ext`);
  newKey(keyFile);
  openssl(['req', '-new', '-key', keyFile, '-subj', `/CN=${name}`, '-out', csrFile]);
  const names = [...(san.dns ?? []).map((d) => `DNS:${d}`), ...(san.ip ?? []).map((a) => `IP:${a}`)];
  writeFileSync(
    extFile,
    [
      `subjectAltName=${names.join(',')}`,
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth,clientAuth',
    ].join('\n'),
  );
  openssl([
    'x509',
    '-req',
    '-in',
    csrFile,
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-CAcreateserial',
    '-days',
    String(days),
    '-extfile',
    extFile,
    '-out',
    certFile,
  ]);
  const certPem = readPem(certFile);
  return { certFile, keyFile, certPem, fingerprint: new X509Certificate(certPem).fingerprint256 };
}

const readPem = (file: string) => readFileSync(file, 'utf8');

/** A CA of its own in `dir` and a loopback server certificate from it: a hub on HTTPS for a dev stack or a bench. */
export function loopbackServer(
  dir: string,
  caName: string,
): { ca: CertificateAuthority; tls: { certFile: string; keyFile: string } } {
  const ca = createCa(dir, caName);
  const { certFile, keyFile } = issueCertificate(ca, dir, 'hub', loopback);
  return { ca, tls: { certFile, keyFile } };
}

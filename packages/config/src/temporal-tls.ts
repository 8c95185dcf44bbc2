import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from './load-config.js';
import type { TemporalTlsConfig } from './schemas.js';

/** The TLS settings of a Temporal connection (the SDK's TLSConfig, for Connection and NativeConnection alike). */
export interface TemporalConnectionTls {
  serverRootCACertificate: Buffer;
  clientCertPair: { crt: Buffer; key: Buffer };
  serverNameOverride?: string;
}

/**
 * Reads and checks the files `temporal.tls` names, listing every problem at once (as loadConfig does), so a satellite
 * with a missing or mismatched certificate stops at start rather than retrying a handshake Temporal refuses.
 */
export function readTemporalTls(tls: TemporalTlsConfig | undefined, source: string): TemporalConnectionTls | undefined {
  if (!tls) return undefined;
  const problems: string[] = [];
  const read = (field: 'caFile' | 'certFile' | 'keyFile'): Buffer | undefined => {
    try {
      return readFileSync(tls[field]);
    } catch (err) {
      problems.push(`temporal.tls.${field}: cannot read ${tls[field]} (${(err as NodeJS.ErrnoException).code ?? err})`);
      return undefined;
    }
  };
  const check = <T>(field: string, what: string, parse: () => T): T | undefined => {
    try {
      return parse();
    } catch {
      problems.push(`temporal.tls.${field}: ${what}`);
      return undefined;
    }
  };
  const [ca, crt, key] = [read('caFile'), read('certFile'), read('keyFile')];
  if (ca) check('caFile', `${tls.caFile} holds no PEM certificate`, () => new X509Certificate(ca));
  const cert = crt && check('certFile', `${tls.certFile} holds no PEM certificate`, () => new X509Certificate(crt));
  const privateKey = key && check('keyFile', `${tls.keyFile} holds no PEM private key`, () => createPrivateKey(key));
  if (cert && privateKey && !cert.checkPrivateKey(privateKey))
    problems.push(`temporal.tls.keyFile: ${tls.keyFile} is not the key of ${tls.certFile}`);
  if (problems.length || !ca || !crt || !key) throw new ConfigError(source, problems);
  return {
    serverRootCACertificate: ca,
    clientCertPair: { crt, key },
    ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
  };
}

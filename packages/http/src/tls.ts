import { readFileSync } from 'node:fs';
import { TLSSocket } from 'node:tls';
import { buildConnector } from 'undici';

/** How a device's certificate is checked: by the site CA, by a pinned leaf fingerprint, or not at all. */
export interface TlsPolicy {
  /** PEM CA bundle content. */
  caPem?: string;
  /** Path to a PEM CA bundle (read once when the connector is built). */
  caFile?: string;
  /** SHA-256 fingerprint of the device's leaf certificate, hex with or without colons. */
  pinnedSha256?: string;
  /** Skip verification entirely. Logged once per device as a warning. */
  insecure?: boolean;
  /** Client identity for mTLS (PEM). */
  clientCertPem?: string;
  clientKeyPem?: string;
}

export interface TlsLogger {
  warn(obj: object, msg: string): void;
}

/** Raised by the connector when the device presents a certificate other than the pinned one. */
export class CertificatePinError extends Error {
  readonly code = 'ERR_FLEET_TLS_PIN_MISMATCH';
  constructor(expected: string, actual: string | undefined) {
    super(`certificate fingerprint ${actual ?? '(none)'} does not match the pinned ${expected}`);
    this.name = 'CertificatePinError';
  }
}

export function normaliseCertFingerprint(fp: string): string {
  const hex = fp.replace(/[:\s]/g, '').toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) throw new RangeError('pinnedSha256 must be a SHA-256 fingerprint (64 hex digits)');
  return hex;
}

const warnedInsecure = new WeakMap<TlsLogger, Set<string>>();

/** Which device a connector is for, as its logs name it. */
export interface ConnectorDevice {
  /** The log field that carries the id (`bmc`, `switchId`). */
  logKey: string;
  id: string;
  /** Logged once per logger and device when verification is off. */
  insecureWarning: string;
}

/** Says once per logger and device that certificates are not checked, not on every connection. */
function warnInsecureOnce(logger: TlsLogger | undefined, device: ConnectorDevice): void {
  if (!logger) return;
  const seen = warnedInsecure.get(logger) ?? new Set<string>();
  warnedInsecure.set(logger, seen);
  if (seen.has(device.id)) return;
  seen.add(device.id);
  logger.warn({ [device.logKey]: device.id }, device.insecureWarning);
}

/**
 * The undici connector for one device. Chain and hostname checks stay on unless `insecure`.
 * A pin replaces chain validation (BMC and switch certificates are often self-signed), so the
 * leaf is compared after the handshake, with session resumption off so every connection shows
 * a certificate to compare.
 */
export function deviceConnector(
  device: ConnectorDevice,
  tls: TlsPolicy | undefined,
  timeoutMs: number,
  logger: TlsLogger | undefined,
): buildConnector.connector {
  const pin = tls?.pinnedSha256 ? normaliseCertFingerprint(tls.pinnedSha256) : undefined;
  const ca = tls?.caPem ?? (tls?.caFile ? readFileSync(tls.caFile, 'utf8') : undefined);
  if (tls?.insecure) warnInsecureOnce(logger, device);
  const base = buildConnector({
    timeout: timeoutMs,
    ...(ca ? { ca } : {}),
    ...(tls?.clientCertPem && tls.clientKeyPem ? { cert: tls.clientCertPem, key: tls.clientKeyPem } : {}),
    rejectUnauthorized: !tls?.insecure && !(pin && !ca),
    ...(pin ? { maxCachedSessions: 0 } : {}),
  });
  if (!pin) return base;
  return (opts, callback) =>
    base(opts, (...args) => {
      const [err, socket] = args;
      if (err) return callback(err, null);
      if (!(socket instanceof TLSSocket)) return callback(null, socket);
      const actual = socket.getPeerCertificate().fingerprint256?.replace(/:/g, '').toUpperCase();
      if (actual !== pin) {
        socket.destroy();
        return callback(new CertificatePinError(pin, actual), null);
      }
      callback(null, socket);
    });
}

const certificateCodes = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ALTNAME|PIN_MISMATCH/;

/** A certificate the client refused: retrying cannot help until the TLS settings change. */
export function isCertificateError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && certificateCodes.test(code);
}

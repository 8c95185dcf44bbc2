import { readFileSync } from 'node:fs';
import { TLSSocket } from 'node:tls';
import { buildConnector } from 'undici';
import type { RedfishLogger, RedfishTlsOptions } from './options.js';

/** Raised when the BMC presents a certificate other than the pinned one. */
export class CertificatePinError extends Error {
  readonly code = 'ERR_FLEET_TLS_PIN_MISMATCH';
  constructor(expected: string, actual: string | undefined) {
    super(`certificate fingerprint ${actual ?? '(none)'} does not match the pinned ${expected}`);
    this.name = 'CertificatePinError';
  }
}

export function normaliseFingerprint(fp: string): string {
  const hex = fp.replace(/[:\s]/g, '').toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) throw new RangeError('pinnedSha256 must be a SHA-256 fingerprint (64 hex digits)');
  return hex;
}

const warnedInsecure = new WeakMap<RedfishLogger, Set<string>>();

/** Says once per logger and BMC that certificates are not checked, not on every call. */
function warnInsecureOnce(logger: RedfishLogger | undefined, bmc: string): void {
  if (!logger) return;
  const seen = warnedInsecure.get(logger) ?? new Set<string>();
  warnedInsecure.set(logger, seen);
  if (seen.has(bmc)) return;
  seen.add(bmc);
  logger.warn({ bmc }, 'Redfish TLS verification disabled for this BMC (insecure)');
}

/**
 * The undici connector for one BMC. Chain and hostname checks stay on unless the
 * options say insecure. A pin replaces chain validation (BMC certificates are usually
 * self-signed), so the leaf is compared after the handshake; TLS session resumption is
 * off then, so every connection presents a certificate to compare.
 */
export function bmcConnector(
  bmc: string,
  tls: RedfishTlsOptions | undefined,
  timeoutMs: number,
  logger: RedfishLogger | undefined,
): buildConnector.connector {
  const pin = tls?.pinnedSha256 ? normaliseFingerprint(tls.pinnedSha256) : undefined;
  const ca = tls?.caPem ?? (tls?.caFile ? readFileSync(tls.caFile, 'utf8') : undefined);
  if (tls?.insecure) warnInsecureOnce(logger, bmc);
  const base = buildConnector({
    timeout: timeoutMs,
    ...(ca ? { ca } : {}),
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

/** A certificate the client refused: retrying cannot help until the site's TLS settings change. */
export function isCertificateError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && certificateCodes.test(code);
}

import { readFileSync } from 'node:fs';
import { TLSSocket } from 'node:tls';
import { buildConnector } from 'undici';
import type { NvueLogger, NvueTlsOptions } from './options.js';

/** Raised by the connector when the switch presents a certificate other than the pinned one. */
export class CertificatePinError extends Error {
  readonly code = 'ERR_FLEET_TLS_PIN_MISMATCH';
  constructor(expected: string, actual: string | undefined) {
    super(`certificate fingerprint ${actual ?? '(none)'} does not match the pinned ${expected}`);
    this.name = 'CertificatePinError';
  }
}

function normaliseFingerprint(fp: string): string {
  const hex = fp.replace(/[:\s]/g, '').toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) throw new RangeError('pinnedSha256 must be a SHA-256 fingerprint (64 hex digits)');
  return hex;
}

const warnedInsecure = new WeakMap<NvueLogger, Set<string>>();

/**
 * The undici connector for one switch. Chain and hostname checks stay on unless `insecure`.
 * A pin replaces chain validation (switch certificates are often self-signed until RMS
 * installs the site's), so the leaf is compared after the handshake, with session
 * resumption off so every connection shows a certificate to compare.
 */
export function switchConnector(switchId: string, tls: NvueTlsOptions | undefined, timeoutMs: number, logger: NvueLogger | undefined): buildConnector.connector {
  const pin = tls?.pinnedSha256 ? normaliseFingerprint(tls.pinnedSha256) : undefined;
  const ca = tls?.caPem ?? (tls?.caFile ? readFileSync(tls.caFile, 'utf8') : undefined);
  if (tls?.insecure && logger) {
    const seen = warnedInsecure.get(logger) ?? new Set<string>();
    warnedInsecure.set(logger, seen);
    if (!seen.has(switchId)) logger.warn({ switchId }, 'NVUE TLS verification disabled for this switch (insecure)');
    seen.add(switchId);
  }
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

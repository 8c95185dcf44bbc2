import type { CallOptions, NvueClient } from './client.js';
import { runAction, type ActionResult, type WaitForActionOptions } from './actions.js';
import type { PollOptions } from './poll.js';
import { applyConfig, type ApplyResult } from './revisions.js';

/*
 * Switch mTLS material. Wire shapes follow RMS's switch certificate workflow (public mirror
 * dsx-ai-factory/nv-rms, switch_gb200_nvidia/mtls): material is imported into the switch's
 * certificate store with `@import` actions on /system/security/{ca-certificate,certificate}/{id},
 * from files staged over SFTP (`file://` URIs) or inline (`data`, NVUE's other import form),
 * then bound to the API with a revision on /system/api and /system/api/mtls. That source is not
 * an NVUE schema: treat these as the best public evidence, not a contract.
 */

export type CaSource = { uri: string } | { pem: string };
/** An entity certificate: separate staged files, or one PEM holding the certificate and its key. */
export type CertificateSource = { certificateUri: string; keyUri: string } | { pem: string };

export interface SwitchCertificate {
  validTo: string | undefined;
  /** Services using it, e.g. `nvue-rest-api`. */
  installed: string[];
}

const ident = (id: string) => {
  if (!/^[A-Za-z0-9._-]+$/.test(id))
    throw new RangeError(`certificate id ${JSON.stringify(id)} may contain only letters, digits, '.', '_' and '-'`);
  return id;
};

export async function importCaCertificate(
  c: NvueClient,
  id: string,
  source: CaSource,
  opts: WaitForActionOptions = {},
): Promise<ActionResult> {
  const parameters = 'uri' in source ? { uri: source.uri } : { data: source.pem };
  return runAction(
    c,
    `/system/security/ca-certificate/${ident(id)}`,
    { '@import': { state: 'start', parameters } },
    opts,
  );
}

export async function importCertificate(
  c: NvueClient,
  id: string,
  source: CertificateSource,
  opts: WaitForActionOptions = {},
): Promise<ActionResult> {
  const parameters =
    'pem' in source
      ? { data: source.pem }
      : { 'uri-public-key': source.certificateUri, 'uri-private-key': source.keyUri };
  return runAction(c, `/system/security/certificate/${ident(id)}`, { '@import': { state: 'start', parameters } }, opts);
}

/**
 * Serves the NVUE API with certificate `certificateId` and, with `caCertificateId`, requires
 * client certificates issued by that CA. New connections see the change once it is applied;
 * verify with a read-only request before switching callers over (docs/reference/rms-behaviours.md#switch-certificates).
 */
export async function bindApiCertificate(
  c: NvueClient,
  ids: { certificateId: string; caCertificateId?: string },
  opts: PollOptions = {},
): Promise<ApplyResult> {
  return applyConfig(
    c,
    [
      { path: '/system/api', body: { certificate: ident(ids.certificateId) } },
      ...(ids.caCertificateId
        ? [{ path: '/system/api/mtls', body: { 'ca-certificate': ident(ids.caCertificateId) } }]
        : []),
    ],
    opts,
  );
}

export async function getCertificate(c: NvueClient, id: string, opts: CallOptions = {}): Promise<SwitchCertificate> {
  const body = await c.getObject(`/system/security/certificate/${ident(id)}`, opts);
  const installed = body['installed'];
  return {
    validTo: typeof body['valid-to'] === 'string' ? body['valid-to'] : undefined,
    installed: Array.isArray(installed)
      ? installed.filter((x): x is string => typeof x === 'string')
      : installed && typeof installed === 'object'
        ? Object.keys(installed)
        : [],
  };
}

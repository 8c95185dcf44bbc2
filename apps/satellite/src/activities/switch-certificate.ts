import type { SwitchActivities } from '@fleet/domain';
import { bindApiCertificate, getCertificate, importCaCertificate, importCertificate } from '@fleet/nvue';
import type { NvosAccess } from '../nvos/connect.js';
import { overTls } from '../switch/access.js';
import { certificateIds, isDomainName, readDomainMaterial, type CertificateRoots } from '../switch/cert-material.js';
import { permanentFailure, switchFailure } from '../switch/failures.js';
import { heartbeatWhile } from '../switch/heartbeat.js';
import { unlessMissing } from '../switch/nvue-outcomes.js';
import { attemptLog } from './context.js';
import { withNvue } from './nvos-image.js';

export interface SwitchCertificateDeps extends NvosAccess {
  certificates: CertificateRoots;
  /** How often import actions and the binding revision are polled. */
  pollIntervalMs: number;
}

/**
 * installSwitchCertificate (RMS ConfigureSwitchCertificate for the NVUE API,
 * docs/reference/rms-behaviours.md#switch-certificates): the domain's material, read from the satellite's own
 * certificate directory (never a payload), is imported unless the switch has it already, the API is bound to it and to
 * the CA its clients must chain to, and the result is checked over a new connection that trusts only that CA
 * (as RMS does: build a candidate transport, verify with a read-only request). The satellite presents its client
 * identity throughout, so it is not locked out once the switch requires it.
 */
export function createSwitchCertificateActivity(
  deps: SwitchCertificateDeps,
): Pick<SwitchActivities, 'installSwitchCertificate'> {
  return {
    async installSwitchCertificate({ target, domain }) {
      if (!isDomainName(domain))
        throw permanentFailure(
          'INVALID_ARGUMENT',
          target.deviceId,
          `${JSON.stringify(domain)} is not a certificate domain name`,
        );
      const log = attemptLog(deps, { deviceId: target.deviceId, domain });
      try {
        const material = await readDomainMaterial(deps.certificates, domain);
        const ids = certificateIds(domain, material);
        const identity = {
          clientCertPem: material.clientIdentity.certPem,
          clientKeyPem: material.clientIdentity.keyPem,
        };

        const putInPlace = () =>
          withNvue(overTls(deps, { ...deps.nvos.tls, ...identity }), target, async (c, signal) => {
            const opts = { pollIntervalMs: deps.pollIntervalMs, signal };
            const hasCa =
              (await unlessMissing(c.get(`/system/security/ca-certificate/${ids.caCertificateId}`, { signal }))) !==
              undefined;
            if (!hasCa) await importCaCertificate(c, ids.caCertificateId, { pem: material.caPem }, opts);
            const hasCertificate =
              (await unlessMissing(getCertificate(c, ids.certificateId, { signal }))) !== undefined;
            if (!hasCertificate)
              await importCertificate(
                c,
                ids.certificateId,
                { pem: `${material.switchIdentity.certPem}${material.switchIdentity.keyPem}` },
                opts,
              );
            const bound = await bindApiCertificate(c, ids, opts);
            log.info(
              { ...ids, imported: { ca: !hasCa, certificate: !hasCertificate }, bound: !bound.noDiff },
              'switch certificate in place',
            );
            return !hasCa || !hasCertificate || !bound.noDiff;
          });
        const changed = await heartbeatWhile(() => ids, putInPlace);

        const candidate = overTls(deps, { insecure: false, caPem: material.caPem, ...identity });
        const installed = await withNvue(candidate, target, (c, signal) =>
          getCertificate(c, ids.certificateId, { signal }),
        );
        if (!installed.installed.includes('nvue-rest-api')) {
          throw permanentFailure(
            'VERIFICATION_FAILED',
            target.deviceId,
            `${ids.certificateId} is installed but the NVUE API does not use it (it serves ` +
              `${installed.installed.join(', ') || 'nothing'})`,
          );
        }
        return { deviceId: target.deviceId, domain, ...ids, changed, validTo: installed.validTo ?? null };
      } catch (err) {
        throw switchFailure(err, target.deviceId);
      }
    },
  };
}

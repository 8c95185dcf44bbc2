import type { Logger } from 'pino';
import type { NvosTarget } from '@fleet/domain';
import { NvueClient, type NvueTlsOptions } from '@fleet/nvue';
import { connect, type HostKeyPolicy, type SshSession } from '@fleet/ssh';
import type { SatelliteConfig } from '../config.js';
import type { SecretStore } from '../secrets/index.js';
import { readClientIdentity } from '../switch/cert-material.js';
import type { KnownHosts } from './known-hosts.js';

/** What reaching a switch's NVOS takes: the site's secrets, its host keys and its NVOS settings. */
export interface NvosAccess {
  secrets: SecretStore;
  knownHosts: KnownHosts;
  nvos: SatelliteConfig['nvos'];
  log: Logger;
}

/** An NVUE client for the switch, with the login resolved from the site's secret store. */
export async function openNvue(access: NvosAccess, target: NvosTarget, signal: AbortSignal): Promise<NvueClient> {
  const { nvos } = access;
  return new NvueClient({
    baseUrl: target.nvueUrl,
    switchId: target.deviceId,
    credentials: await access.secrets.resolve(target.credentialRef),
    tls: await clientTls(nvos),
    connectTimeoutMs: nvos.connectTimeoutMs,
    requestTimeoutMs: nvos.requestTimeoutMs,
    logger: access.log,
    signal,
  });
}

/**
 * An SSH session to the switch, its host key checked before the password is sent: pinned, else
 * trusted on first use, unless the caller brings its own policy.
 */
export async function openSsh(
  access: NvosAccess,
  target: NvosTarget,
  signal: AbortSignal,
  hostKey?: HostKeyPolicy,
): Promise<SshSession> {
  const { username, password } = await access.secrets.resolve(target.credentialRef);
  return connect({
    host: target.ssh.host,
    port: target.ssh.port,
    device: target.deviceId,
    username,
    password,
    hostKey: hostKey ?? (await access.knownHosts.policyFor(target)),
    connectTimeoutMs: access.nvos.connectTimeoutMs,
    signal,
  });
}

/** The site TLS policy, plus the default domain's client identity once switches require mTLS. */
async function clientTls(nvos: NvosAccess['nvos']): Promise<NvueTlsOptions> {
  if (!nvos.defaultSwitchDomain) return nvos.tls;
  const { certPem, keyPem } = await readClientIdentity(nvos.clientTlsRoot, nvos.defaultSwitchDomain);
  return { ...nvos.tls, clientCertPem: certPem, clientKeyPem: keyPem };
}

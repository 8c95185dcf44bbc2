import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNvosSimulator, type NvosSimulator, type NvosTimings, type SwitchSpec } from '@fleet/simulators';
import { NvueClient, type NvueClientOptions } from '../src/index.js';

export const USER = 'admin';
export const PASSWORD = 'switch-pw';
/** Poll fast against a simulator running at timeScale 0.001. */
export const fast = { pollIntervalMs: 5, timeoutMs: 10_000 };

export function startSim(
  switches: (Partial<SwitchSpec> & { id: string })[],
  timings: Partial<NvosTimings> = {},
): Promise<NvosSimulator> {
  return startNvosSimulator({
    switches: switches.map((s) => ({
      address: '127.0.0.1',
      nvuePort: 0,
      sshPort: 0,
      username: USER,
      password: PASSWORD,
      nvosVersion: '25.02.4282',
      ...s,
    })),
    timeScale: 0.001,
    timings: { rebootS: 300, handoffS: 100, ...timings },
  });
}

/** A client for switch `id` with short retry delays. */
export function clientFor(sim: NvosSimulator, id: string, opts: Partial<NvueClientOptions> = {}): NvueClient {
  return new NvueClient({
    baseUrl: sim.nvueUrl(id),
    switchId: id,
    credentials: { username: USER, password: PASSWORD },
    retryBaseDelayMs: 5,
    maxRetryDelayMs: 20,
    ...opts,
  });
}

/** NVUE requests the switch received, as `METHOD path` strings (status and body alongside). */
export function requests(sim: NvosSimulator, id: string): { line: string; status: number; body?: unknown }[] {
  return sim.switch(id).nvueRequests.map((r) => ({
    line: `${r.method} ${r.path}`,
    status: r.status,
    ...(r.body === undefined ? {} : { body: r.body }),
  }));
}

export interface Pki {
  caPem: string;
  /** Signed by the CA for IP 127.0.0.1. */
  server: { certPem: string; keyPem: string; fingerprint: string };
  /** Signed by the CA for client authentication. */
  client: { certPem: string; keyPem: string };
  /** Self-signed for 127.0.0.1: what a switch presents before the site's certificate is installed. */
  bootstrap: { certPem: string; keyPem: string; fingerprint: string };
}

/** A site CA and certificates made with the openssl CLI. */
export function makePki(dir: string): Pki {
  const ossl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore', cwd: dir });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ossl(
    'req',
    '-x509',
    ...ec,
    '-days',
    '2',
    '-subj',
    '/CN=site-ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  );
  const signed = (name: string, ext: string) => {
    writeFileSync(join(dir, `${name}.ext`), ext);
    ossl('req', ...ec, '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
    ossl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      `${name}.pem`,
      '-extfile',
      `${name}.ext`,
    );
    return {
      certPem: readFileSync(join(dir, `${name}.pem`), 'utf8'),
      keyPem: readFileSync(join(dir, `${name}.key`), 'utf8'),
    };
  };
  ossl(
    'req',
    '-x509',
    ...ec,
    '-days',
    '2',
    '-subj',
    '/CN=bootstrap',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    'boot.key',
    '-out',
    'boot.pem',
  );
  const server = signed('switch', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  const bootstrap = {
    certPem: readFileSync(join(dir, 'boot.pem'), 'utf8'),
    keyPem: readFileSync(join(dir, 'boot.key'), 'utf8'),
  };
  const fp = (pem: string) => new X509Certificate(pem).fingerprint256;
  return {
    caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    server: { ...server, fingerprint: fp(server.certPem) },
    client: signed('client', 'extendedKeyUsage=clientAuth\n'),
    bootstrap: { ...bootstrap, fingerprint: fp(bootstrap.certPem) },
  };
}

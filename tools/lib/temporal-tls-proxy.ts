import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { freePort } from '@fleet/temporal';
import {
  createCa,
  issueCertificate,
  loopback,
  type CertificateAuthority,
  type IssuedCertificate,
} from '@fleet/simulators/pki';

// The Temporal dev server (`temporal server start-dev`) serves plain gRPC only. To run satellites and the workflow
// agent over mTLS as a site does, the dev stack and the tests put Debian's nginx in front of it: TLS with a server
// certificate from one CA, client certificates required from a per-site client CA, gRPC passed on to the dev
// server's plain port. nginx rather than stunnel: stunnel (5.68) offers no ALPN, and the Rust core under the
// worker's NativeConnection (tonic) refuses a TLS connection that did not negotiate h2 ("H2NotNegotiated").
// docs/security.md "TLS" has the whole story.

/** Debian's nginx (tools/install.sh); /usr/sbin is not on every user's PATH. */
const nginxPath = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

/** The files a Temporal client needs: the config section `temporal.tls`. */
export interface TemporalClientTls {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface TemporalTlsProxy {
  /** host:port of the TLS endpoint. */
  address: string;
  /** The CA the proxy's server certificate chains to. */
  serverCa: CertificateAuthority;
  /** The CA whose client certificates the proxy accepts (one per site). */
  clientCa: CertificateAuthority;
  /** A client certificate from `clientCa` with its key, and the server CA: what `temporal.tls` names. */
  clientTls(name: string): TemporalClientTls;
  /** nginx's process id (the dev stack records it for tools/down.sh). */
  pid: number | undefined;
  stop(): Promise<void>;
}

export interface TemporalTlsProxyOptions {
  /** Where the certificates, nginx's config, its log and its temporary files go. */
  dir: string;
  /** The dev server's plain gRPC address (host:port). */
  target: string;
  port?: number;
}

/** The same TLS settings as `temporal.tls` after reading (packages/config readTemporalTls), for in-process clients. */
export function clientTlsConfig(tls: TemporalClientTls) {
  return {
    serverRootCACertificate: readFileSync(tls.caFile),
    clientCertPair: { crt: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
  };
}

/** Starts nginx as an mTLS front for the dev server at `target` and waits until a client gets through it. */
export async function startTemporalTlsProxy(opts: TemporalTlsProxyOptions): Promise<TemporalTlsProxy> {
  const dir = join(opts.dir, 'temporal-tls');
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  const serverCa = createCa(dir, 'temporal-server-ca');
  const clientCa = createCa(dir, 'temporal-client-ca');
  const server = issueCertificate(serverCa, dir, 'temporal-frontend', loopback);
  const port = opts.port ?? (await freePort());
  const address = `127.0.0.1:${port}`;
  const confFile = join(dir, 'nginx.conf');
  writeFileSync(confFile, nginxConfig({ dir, port, target: opts.target, server, clientCa }));
  const clientTls = (name: string): TemporalClientTls => {
    const cert = issueCertificate(clientCa, dir, name, { dns: [name] });
    return { caFile: serverCa.certFile, certFile: cert.certFile, keyFile: cert.keyFile };
  };

  const logFile = join(dir, 'nginx.log');
  const log = openSync(logFile, 'a');
  // `-e stderr`: nginx would otherwise open the system's error log before it reads this config.
  const child = spawn(nginxPath, ['-e', 'stderr', '-p', dir, '-c', confFile], { stdio: ['ignore', log, log] });
  closeSync(log);
  // nginx stops with this process, however it exits short of SIGKILL (the dev stack's guardian covers that).
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    await stopChild(child);
  };
  try {
    await waitUntilServing(child, address, clientTlsConfig(clientTls('proxy-probe')), logFile);
  } catch (err) {
    await stop();
    throw err;
  }
  return { address, serverCa, clientCa, clientTls, pid: child.pid, stop };
}

function nginxConfig(o: {
  dir: string;
  port: number;
  target: string;
  server: IssuedCertificate;
  clientCa: CertificateAuthority;
}): string {
  const tmp = join(o.dir, 'tmp');
  return `# Written by tools/lib/temporal-tls-proxy.ts: mTLS in front of a Temporal dev server.
# One process, as the user that started it (no workers switching to another user).
daemon off;
master_process off;
pid ${join(o.dir, 'nginx.pid')};
error_log stderr notice;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  server {
    listen 127.0.0.1:${o.port} ssl http2;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_certificate ${o.server.certFile};
    ssl_certificate_key ${o.server.keyFile};
    # Only clients with a certificate from the site's client CA get through. nginx checks it either way; the others
    # get a gRPC UNAUTHENTICATED that names the cause ('on' would answer an HTTP 400 gRPC clients cannot read).
    ssl_client_certificate ${o.clientCa.certFile};
    ssl_verify_client optional_no_ca;
    # Temporal's long polls last up to 70 s; a workflow history or a batch of tasks may exceed nginx's 1 MB default.
    grpc_read_timeout 300s;
    grpc_send_timeout 300s;
    client_body_timeout 300s;
    client_max_body_size 128m;
    keepalive_requests 1000000;
    location / {
      default_type application/grpc;
      if ($ssl_client_verify != SUCCESS) {
        add_header grpc-status 16 always;
        add_header grpc-message "client certificate refused: $ssl_client_verify" always;
        return 200;
      }
      grpc_pass grpc://${o.target};
    }
  }
}
`;
}

async function waitUntilServing(
  child: ChildProcess,
  address: string,
  tls: ReturnType<typeof clientTlsConfig>,
  logFile: string,
): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`nginx exited (${child.exitCode ?? child.signalCode}): ${readFileSync(logFile, 'utf8')}`);
    try {
      const c = await Connection.connect({ address, tls, connectTimeout: 1_000 });
      try {
        await c.workflowService.getSystemInfo({});
        return;
      } finally {
        await c.close();
      }
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`Temporal did not answer through nginx on ${address}: ${(err as Error).message}`, {
          cause: err,
        });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  // SIGTERM: nginx's fast shutdown (a graceful one would wait for Temporal's long polls).
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(t);
}

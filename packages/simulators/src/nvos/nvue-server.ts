import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { chance } from '../redfish/faults.js';
import { sleep } from '../redfish/http-util.js';
import { BASE, NvueProblem, routeNvue, type NvueExchange, type NvueReply } from './nvue-routes.js';
import type { SimulatedSwitch } from './switch.js';

export interface NvueServer {
  /** Serves a socket accepted on the switch's NVUE port. */
  accept(socket: Socket): void;
  /** Follows the configuration (the certificate bound to the API, the mTLS CA); true when it changed. */
  refreshTls(): boolean;
}

/**
 * The NVUE REST API of one switch, over HTTP or (with spec.tls) HTTPS. With a CA bound to
 * `system/api/mtls`, requests without a client certificate that chains to it get 403.
 */
export function nvueServer(sw: SimulatedSwitch): NvueServer {
  const handler = (req: IncomingMessage, res: ServerResponse) => void serve(sw, req, res);
  const tls = sw.spec.tls;
  if (!tls) {
    const server = createHttp(handler);
    server.keepAliveTimeout = 5_000;
    return { accept: (socket) => server.emit('connection', socket), refreshTls: () => false };
  }
  /** The identity and client-certificate CA the configuration asks for. */
  const wanted = () => {
    const bound = sw.certificates.get(sw.config.api.certificate ?? '');
    const ca = sw.caCertificates.get(sw.config.api.mtlsCa ?? '')?.pem;
    return { key: bound?.keyPem ?? tls.keyPem, cert: bound?.certPem ?? tls.certPem, ...(ca ? { ca } : {}) };
  };
  // Client certificates are asked for but checked per request, since mTLS is switched on by configuration.
  const server = createHttps({ ...wanted(), requestCert: true, rejectUnauthorized: false }, handler);
  server.keepAliveTimeout = 5_000;
  let current = JSON.stringify(wanted());
  return {
    accept: (socket) => server.emit('connection', socket),
    refreshTls: () => {
      const next = wanted();
      if (JSON.stringify(next) === current) return false;
      current = JSON.stringify(next);
      server.setSecureContext(next);
      return true;
    },
  };
}

async function serve(sw: SimulatedSwitch, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const method = req.method ?? 'GET';
  const x: NvueExchange = {
    sw,
    req,
    method,
    path: url.pathname.slice(BASE.length).replace(/^\/+|\/+$/g, ''),
    query: url.searchParams,
  };
  sw.inFlight++;
  sw.peakConcurrentRequests = Math.max(sw.peakConcurrentRequests, sw.inFlight);
  let reply: NvueReply | undefined;
  try {
    reply = await answer(sw, x, url.pathname);
  } catch (err) {
    reply = err instanceof NvueProblem ? err.reply : new NvueProblem(500, (err as Error).message).reply;
  } finally {
    sw.inFlight--;
  }
  sw.record({
    at: new Date().toISOString(),
    method,
    path: url.pathname + url.search,
    status: reply?.status ?? 0,
    ...(x.logged === undefined ? {} : { body: x.logged }),
  });
  if (reply) write(req, res, reply);
}

/** Faults, then transport checks (mTLS, Basic auth), then the API; undefined when the client went away. */
async function answer(sw: SimulatedSwitch, x: NvueExchange, pathname: string): Promise<NvueReply | undefined> {
  const { req } = x;
  if (sw.faults.latencyMs) await sleep(sw.faults.latencyMs);
  if (sw.faults.hang) {
    const gone = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
    while (sw.faults.hang && !req.socket.destroyed) await sw.faultsChanged(gone);
  }
  if (req.socket.destroyed) return undefined;
  if (chance(sw.faults.errorRate)) {
    const status = sw.faults.errorStatus ?? 500;
    throw new NvueProblem(status, 'simulated failure', status === 503 ? { 'Retry-After': '1' } : undefined);
  }
  if (pathname !== BASE && !pathname.startsWith(`${BASE}/`)) throw new NvueProblem(404, `${pathname} not found`);
  if (sw.config.api.mtlsCa && req.socket instanceof TLSSocket && !req.socket.authorized) {
    throw new NvueProblem(403, 'a client certificate issued by the configured CA is required');
  }
  if (!authenticated(sw, req))
    throw new NvueProblem(401, 'authentication required', { 'WWW-Authenticate': 'Basic realm="NVUE"' });
  return routeNvue(x);
}

function authenticated(sw: SimulatedSwitch, req: IncomingMessage): boolean {
  const header = req.headers.authorization ?? '';
  if (!header.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 && sw.checkPassword(decoded.slice(0, colon), decoded.slice(colon + 1));
}

function write(req: IncomingMessage, res: ServerResponse, reply: NvueReply): void {
  // Whatever the handler did not read is discarded so the connection stays usable.
  req.resume();
  const [type, text] =
    reply.text !== undefined ? ['text/plain', reply.text] : ['application/json', JSON.stringify(reply.json ?? {})];
  res.writeHead(reply.status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(text), ...reply.headers });
  res.end(text);
}

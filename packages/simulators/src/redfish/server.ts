import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { defaultTimings, SimulatedBmc, type BmcSpec, type Timings } from './bmc.js';
import { isErrorReply, redfishError } from './errors.js';
import { chance } from './faults.js';
import { wirePowerDomains } from './power-domains.js';
import { wireRacks } from './rack.js';
import { sleep, type Reply } from './http-util.js';
import { route, type Exchange } from './router.js';
import { resetConnection, secureContext, serveTls } from './connection.js';
import { issueCertificate, type CertificateAuthority } from '../pki.js';

export interface RedfishSimulatorOptions {
  bmcs: BmcSpec[];
  /** Multiplies every simulated delay: 0.01 turns a 30 s power-on into 0.3 s. */
  timeScale?: number;
  timings?: Partial<Timings>;
  /**
   * HTTPS: each BMC presents its own certificate from the site CA `ca`, for its loopback address (IP SAN), issued at
   * start into `dir`. Plain HTTP when absent.
   */
  tls?: { ca: CertificateAuthority; dir: string };
}

export interface RedfishSimulator {
  bmc(id: string): SimulatedBmc;
  bmcUrl(id: string): string;
  /** Every BMC id, in configuration order. */
  ids(): string[];
  close(): Promise<void>;
}

/**
 * Many BMCs in one process. Each BMC listens on its own loopback address and port;
 * all connections feed one HTTP server, which finds the BMC from the socket's local
 * address, the way a real network would route to separate hosts.
 */
export async function startRedfishSimulator(opts: RedfishSimulatorOptions): Promise<RedfishSimulator> {
  const timings = { ...defaultTimings, ...opts.timings };
  const byEndpoint = new Map<string, SimulatedBmc>();
  const byId = new Map<string, SimulatedBmc>();
  /** With `tls`, each endpoint's certificate. */
  const certificates = new Map<string, ReturnType<typeof secureContext>>();
  for (const [i, spec] of opts.bmcs.entries()) {
    if (!/^127\./.test(spec.address)) throw new Error(`BMC ${spec.id}: ${spec.address} is not a loopback address`);
    const bmc = new SimulatedBmc(spec, timings, opts.timeScale ?? 1);
    byId.set(spec.id, bmc);
    const endpoint = `${spec.address}:${spec.port}`;
    byEndpoint.set(endpoint, bmc);
    if (opts.tls) {
      // Files are named by position: ids are free text.
      const leaf = issueCertificate(opts.tls.ca, opts.tls.dir, `bmc-${i + 1}`, { ip: [spec.address] });
      certificates.set(endpoint, secureContext({ certPem: leaf.certPem, keyPem: readFileSync(leaf.keyFile, 'utf8') }));
    }
  }
  wirePowerDomains(byId.values());
  wireRacks(byId.values());

  const http = createServer((req, res) => {
    const key = `${req.socket.localAddress?.replace(/^::ffff:/, '')}:${req.socket.localPort}`;
    const bmc = byEndpoint.get(key);
    if (!bmc) {
      res.writeHead(421).end();
      return;
    }
    // A BMC serves one request at a time: chain each request behind the previous one.
    bmc.queue = bmc.queue.then(() => serve(bmc, req, res)).catch(() => undefined);
  });
  http.keepAliveTimeout = 5_000;

  const listeners: NetServer[] = [];
  // Tracked here because sockets handed over with emit('connection') are not always known to http.
  const sockets = new Set<Socket>();
  const endpoints = [...byEndpoint.keys()];
  try {
    for (const ep of endpoints) {
      const at = ep.lastIndexOf(':');
      const certificate = certificates.get(ep);
      const l = createNetServer((socket: Socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        http.emit('connection', certificate ? serveTls(socket, certificate) : socket);
      });
      await new Promise<void>((resolve, reject) => {
        l.once('error', reject);
        l.listen({ host: ep.slice(0, at), port: Number(ep.slice(at + 1)), backlog: 64 }, resolve);
      });
      listeners.push(l);
    }
  } catch (err) {
    await Promise.all(listeners.map((l) => new Promise((r) => l.close(r))));
    throw err;
  }

  const get = (id: string) => {
    const b = byId.get(id);
    if (!b) throw new Error(`no simulated BMC ${id}`);
    return b;
  };
  return {
    bmc: get,
    bmcUrl: (id) => `${opts.tls ? 'https' : 'http'}://${get(id).spec.address}:${get(id).spec.port}`,
    ids: () => [...byId.keys()],
    close: async () => {
      for (const b of byId.values()) b.stop();
      // Stop accepting first, then drop kept-alive sockets: a listener's close waits for them.
      const closed = listeners.map((l) => new Promise((r) => l.close(r)));
      for (const socket of sockets) socket.destroy();
      await Promise.all(closed);
      await new Promise((r) => http.close(r));
    },
  };
}

async function serve(bmc: SimulatedBmc, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  const log = (status: number, logged?: unknown) =>
    bmc.record({
      at: new Date().toISOString(),
      method,
      path,
      status,
      ...(logged === undefined ? {} : { body: logged }),
    });

  // No AC: nothing answers at this address.
  if (bmc.acLost) {
    resetConnection(req.socket);
    return log(0);
  }
  // A tray that stopped answering: the connection is reset, or held open and never answered (the client times out).
  const managerReset = method === 'POST' && bmc.profile.managers.some((m) => path === `${m}/Actions/Manager.Reset`);
  if (bmc.unresponsive && !(bmc.unresponsive.answersManagerReset && managerReset)) {
    if (bmc.unresponsive.mode === 'reset') resetConnection(req.socket);
    else bmc.holdUnanswered(req.socket);
    return log(0);
  }
  const f = bmc.faults;
  if (f.latencyMs) await sleep(f.latencyMs);
  if (f.hang) {
    await bmc.waitWhileHung(new Promise((resolve) => req.socket.once('close', () => resolve())));
    if (req.socket.destroyed) return log(0);
  }
  if (chance(f.resetRate)) {
    resetConnection(req.socket);
    return log(0);
  }

  const x: Exchange = { bmc, req, path, method };
  let reply: Reply;
  const odataVersion = req.headers['odata-version'];
  const unknownQuery = unsupportedQuery(req.url ?? '');
  if (bmc.rebooting) {
    const retry = String(bmc.rebootRetryAfterS);
    reply = redfishError(503, 'ServiceTemporarilyUnavailable', [retry], { 'Retry-After': retry });
  } else if (odataVersion !== undefined && odataVersion !== '4.0') {
    // DSP0266 §8.1: an OData-Version the service does not support fails the request.
    reply = redfishError(412, 'HeaderInvalid', ['OData-Version']);
  } else if (unknownQuery) {
    reply = redfishError(501, 'QueryParameterUnsupported', [unknownQuery]);
  } else if (chance(f.errorRate)) {
    const status = f.errorStatus ?? 500;
    reply =
      status === 503
        ? redfishError(503, 'ServiceTemporarilyUnavailable', ['5'], { 'Retry-After': '5' })
        : redfishError(status, 'InternalError');
  } else {
    try {
      reply = await route(x);
    } catch (err) {
      reply = isErrorReply(err) ? err : redfishError(500, 'InternalError');
    }
  }
  // A handler that dropped the connection (a reboot mid-upload) has nobody to answer.
  if (req.socket.destroyed) return log(0, x.logged);
  log(reply.status, x.logged);
  write(req, res, reply);
}

/** OData system query options the simulator accepts and ignores; any other $-parameter gets 501. */
const KNOWN_QUERY = new Set(['$expand', '$select', '$filter', '$top', '$skip', '$levels', 'only', 'excerpt']);

function unsupportedQuery(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  for (const key of new URLSearchParams(url.slice(q + 1)).keys())
    if (key.startsWith('$') && !KNOWN_QUERY.has(key)) return key;
  return undefined;
}

/** Link rel=describedby (DSP0266 §8.6.2) names the JSON schema of the resource's @odata.type. */
function describedBy(body: unknown): string | undefined {
  const type = (body as { '@odata.type'?: unknown } | undefined)?.['@odata.type'];
  const m = typeof type === 'string' ? /^#(\w+)\.(v\d+_\d+_\d+\.)?\w+$/.exec(type) : null;
  return m ? `<http://redfish.dmtf.org/schemas/v1/${m[1]}.${m[2] ?? ''}json>; rel=describedby` : undefined;
}

function write(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  // Whatever the handler did not read is discarded so the connection stays usable.
  req.resume();
  const headers: Record<string, string | number> = {
    'OData-Version': '4.0',
    'Cache-Control': 'no-cache',
    ...reply.headers,
  };
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers).end();
    return;
  }
  const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  const link = reply.status === 200 ? describedBy(reply.body) : undefined;
  res.writeHead(reply.status, {
    'Content-Type': 'application/json;charset=utf-8',
    ...headers,
    ...(link ? { Link: link } : {}),
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { defaultTimings, isResetType, SimulatedBmc, type BmcSpec, type Timings } from './bmc.js';
import { redfishError, type RedfishErrorReply } from './errors.js';
import { serviceRoot, system, systemsCollection } from './resources.js';

export interface RedfishSimulatorOptions {
  bmcs: BmcSpec[];
  /** Multiplies every simulated delay: 0.01 turns a 30 s power-on into 0.3 s. */
  timeScale?: number;
  timings?: Partial<Timings>;
}

export interface RedfishSimulator {
  bmc(id: string): SimulatedBmc;
  bmcUrl(id: string): string;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const MAX_BODY = 1 << 20;

/**
 * Many BMCs in one process. Each BMC listens on its own loopback address and port;
 * all connections feed one HTTP server, which finds the BMC from the socket's local
 * address, the way a real network would route to separate hosts.
 */
export async function startRedfishSimulator(opts: RedfishSimulatorOptions): Promise<RedfishSimulator> {
  const timings = { ...defaultTimings, ...opts.timings };
  const byEndpoint = new Map<string, SimulatedBmc>();
  const byId = new Map<string, SimulatedBmc>();
  for (const spec of opts.bmcs) {
    const bmc = new SimulatedBmc(spec, timings, opts.timeScale ?? 1);
    byId.set(spec.id, bmc);
    byEndpoint.set(`${spec.address}:${spec.port}`, bmc);
  }

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
  const endpoints = [...new Set(opts.bmcs.map((b) => `${b.address}:${b.port}`))];
  for (const ep of endpoints) {
    const [address, port] = [ep.slice(0, ep.lastIndexOf(':')), Number(ep.slice(ep.lastIndexOf(':') + 1))];
    const l = createNetServer((socket: Socket) => http.emit('connection', socket));
    await new Promise<void>((resolve, reject) => {
      l.once('error', reject);
      l.listen({ host: address, port, backlog: 64 }, resolve);
    });
    listeners.push(l);
  }

  return {
    bmc: (id) => {
      const b = byId.get(id);
      if (!b) throw new Error(`no simulated BMC ${id}`);
      return b;
    },
    bmcUrl: (id) => {
      const b = byId.get(id);
      if (!b) throw new Error(`no simulated BMC ${id}`);
      return `http://${b.spec.address}:${b.spec.port}`;
    },
    close: async () => {
      for (const b of byId.values()) b.stop();
      await Promise.all(listeners.map((l) => new Promise((r) => l.close(r))));
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}

async function serve(bmc: SimulatedBmc, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
  let body: unknown;
  let reply: Reply;
  try {
    body = await readJson(req);
    reply = route(bmc, req, path, body);
  } catch (err) {
    reply = err as RedfishErrorReply;
    if (typeof reply.status !== 'number') reply = redfishError(500, 'InternalError', String(err));
  }
  bmc.log.push({ at: new Date().toISOString(), method: req.method ?? 'GET', path, status: reply.status, ...(body === undefined ? {} : { body }) });
  const headers: Record<string, string> = { 'OData-Version': '4.0', ...reply.headers };
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers).end();
    return;
  }
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, { ...headers, 'Content-Type': 'application/json;charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function route(bmc: SimulatedBmc, req: IncomingMessage, path: string, body: unknown): Reply {
  const method = req.method ?? 'GET';
  if (path === '/redfish') return { status: 200, body: { v1: '/redfish/v1/' } };
  if (path === '/redfish/v1' && method === 'GET') return { status: 200, body: serviceRoot(bmc) };
  authenticate(bmc, req);
  if (method === 'GET' && path === '/redfish/v1/Systems') return { status: 200, body: systemsCollection() };
  if (method === 'GET' && path === '/redfish/v1/Systems/System_0') return { status: 200, body: system(bmc) };
  if (path === '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset') {
    if (method !== 'POST') throw redfishError(405, 'OperationNotAllowed', 'Use POST to invoke an action.', [], { Allow: 'POST' });
    const resetType = (body as { ResetType?: unknown } | undefined)?.ResetType;
    if (resetType === undefined) throw redfishError(400, 'ActionParameterMissing', 'The action ComputerSystem.Reset requires the parameter ResetType to be present in the request body.', ['ComputerSystem.Reset', 'ResetType']);
    if (!isResetType(resetType)) throw redfishError(400, 'ActionParameterValueNotInList', `The value '${String(resetType)}' for the parameter ResetType in the action ComputerSystem.Reset is not in the list of acceptable values.`, [String(resetType), 'ResetType', 'ComputerSystem.Reset']);
    bmc.reset(resetType);
    return { status: 204 };
  }
  throw redfishError(404, 'ResourceNotFound', `The requested resource of type unknown named '${path}' was not found.`, ['unknown', path]);
}

function authenticate(bmc: SimulatedBmc, req: IncomingMessage): void {
  const header = req.headers.authorization ?? '';
  const expected = `Basic ${Buffer.from(`${bmc.spec.username}:${bmc.spec.password}`).toString('base64')}`;
  const a = Buffer.from(header);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw redfishError(401, 'NoValidSession', 'There is no valid session established with the implementation.', [], { 'WWW-Authenticate': 'Basic realm="simulated BMC"' });
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw redfishError(413, 'PayloadTooLarge', 'The request payload is too large.');
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw redfishError(400, 'MalformedJSON', 'The request body submitted was malformed JSON and could not be parsed by the receiving service.');
  }
}

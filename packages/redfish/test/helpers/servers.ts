import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { createServer as createTcp, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The team's shared folder sits beside the repository (../shared), in CI as on a desk.
export const peers = fileURLToPath(new URL('../../../../../shared/peers', import.meta.url));
export const mockups = join(peers, 'dmtf-redfish-mockups');

export interface Logged {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

export interface TestServer {
  url: string;
  requests: Logged[];
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, path: string) => void | Promise<void>;

/** A loopback HTTP(S) server that logs every request and hands it to `handler`. */
export async function serve(handler: Handler, tls?: { key: string; cert: string }): Promise<TestServer> {
  const requests: Logged[] = [];
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers });
    Promise.resolve(handler(req, res, path)).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { message: String(err) } });
    });
  };
  const server: Server = tls ? createHttps({ key: tls.key, cert: tls.cert }, listener) : createHttp(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * Serves a Redfish capture read-only. `root` is the folder that holds /redfish/v1's
 * index.json: the mockup folder itself (short form) or <extract>/redfish/v1 (long form).
 */
export function staticRedfish(root: string): Handler {
  return (req, res, path) => {
    const trimmed = path.replace(/\/+$/, '');
    if (req.method !== 'GET' || !(trimmed === '/redfish/v1' || trimmed.startsWith('/redfish/v1/')))
      return json(res, 405, { error: { message: 'read-only' } });
    const text = captureDocument(root, trimmed);
    if (text === 'bad-path') return json(res, 400);
    if (!text) return json(res, 404, { error: { message: `no ${trimmed}` } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': text.length });
    res.end(text);
  };
}

/** The capture's document for a /redfish/v1 path (no trailing slash); undefined if none, 'bad-path' for `..`. */
export function captureDocument(root: string, path: string): Buffer | 'bad-path' | undefined {
  let rel: string;
  try {
    rel = decodeURIComponent(path.slice('/redfish/v1'.length));
  } catch {
    return 'bad-path';
  }
  if (rel.split('/').includes('..')) return 'bad-path';
  const file = join(root, rel, 'index.json');
  return existsSync(file) ? readFileSync(file) : undefined;
}

/** A captured collection with each member's captured document in place of its link, as `$expand=.` asks. */
export function expandedCollection(root: string, doc: Buffer): Record<string, unknown> {
  const body = JSON.parse(doc.toString('utf8')) as { Members?: { '@odata.id'?: string }[] };
  if (!Array.isArray(body.Members)) return body;
  const members = body.Members.map((m) => {
    const member = typeof m?.['@odata.id'] === 'string' && captureDocument(root, m['@odata.id'].replace(/\/+$/, ''));
    return member && member !== 'bad-path' ? (JSON.parse(member.toString('utf8')) as unknown) : m;
  });
  return { ...body, Members: members };
}

/** Extracts the GH200 capture (long form) into a temp dir; returns its /redfish/v1 folder and a cleanup. */
export function extractGh200(): { root: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-gh200-'));
  execFileSync('tar', ['-xzf', join(peers, 'nvidia-bmc-mock-captures', 'gh200.tar.gz'), '-C', dir]);
  return { root: join(dir, 'redfish', 'v1'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export const credentials = { username: 'admin', password: 'secret-pw' };

/** A loopback port free now, for a simulated BMC to listen on. */
export async function freePort(): Promise<number> {
  const s = createTcp();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

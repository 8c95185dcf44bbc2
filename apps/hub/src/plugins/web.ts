import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, posix, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface WebOptions {
  /** The built web console (apps/web/dist). */
  root: string;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** Paths the API, its document, docs, health and metrics own: never answered with the console. */
const reserved = /^\/(?:v1(?:\/|$)|openapi\.json$|docs(?:\/|$)|healthz$|metrics$)/;

/** Vite names built assets by content hash, so they never change under their name. */
const immutable = 'public, max-age=31536000, immutable';

/**
 * Serves the web console from `root` at `/`, same origin as the API. It adds no route: it answers GET and HEAD
 * requests that no route matched (so the 404/405 answers of the API, which list the routes, are unchanged), with
 * the file when one exists and otherwise, for a page navigation (Accept: text/html), index.html so that the
 * console's own routes (/racks/…, /jobs/…) load on reload. Everything else falls through to the JSON 404.
 */
export function registerWeb(app: FastifyInstance, { root }: WebOptions): void {
  const base = resolve(root);
  if (!existsSync(join(base, 'index.html'))) {
    app.log.warn({ root: base }, 'web console not built (no index.html): serving the API only');
    return;
  }
  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404 || (request.method !== 'GET' && request.method !== 'HEAD')) return;
    const path = decodedPath(request.url);
    if (path === undefined || reserved.test(path)) return;
    const file = path === '/' ? undefined : await fileUnder(base, path);
    if (file) return send(request, reply, file, path.startsWith('/assets/') ? immutable : 'no-cache');
    if (path.startsWith('/assets/') || !acceptsHtml(request)) return;
    return send(request, reply, { path: join(base, 'index.html'), size: -1, mtimeMs: 0 }, 'no-cache');
  });
}

function decodedPath(url: string): string | undefined {
  try {
    const path = decodeURIComponent(url.split('?')[0]!);
    // A control character or backslash is never part of a console path: not served, the JSON 404 answers.
    return [...path].some((c) => c < ' ' || c === '\x7f' || c === '\\') ? undefined : path;
  } catch {
    return undefined;
  }
}

interface FileInfo {
  path: string;
  size: number;
  mtimeMs: number;
}

/** The regular file at `path` inside `base`; undefined when there is none or the path leaves `base`. */
async function fileUnder(base: string, path: string): Promise<FileInfo | undefined> {
  const normalized = posix.normalize(path);
  const full = join(base, normalized);
  if (!full.startsWith(base + sep)) return undefined;
  try {
    const info = await stat(full);
    return info.isFile() ? { path: full, size: info.size, mtimeMs: info.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

function acceptsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

async function send(request: FastifyRequest, reply: FastifyReply, file: FileInfo, cacheControl: string) {
  const info = file.size >= 0 ? file : await stat(file.path);
  const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
  void reply
    .header('cache-control', cacheControl)
    .header('etag', etag)
    .header('x-content-type-options', 'nosniff')
    .type(contentTypes[extname(file.path)] ?? 'application/octet-stream');
  if (request.headers['if-none-match'] === etag) return reply.status(304).send();
  void reply.status(200).header('content-length', info.size);
  return reply.send(request.method === 'HEAD' ? undefined : createReadStream(file.path));
}

import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const webRoot = fileURLToPath(new URL('..', import.meta.url));
export const distDir = join(webRoot, 'dist');

/** Builds the console unless dist/ is already there (the install step builds it). */
export function ensureBuilt(): void {
  if (existsSync(join(distDir, 'index.html'))) return;
  const vite = join(webRoot, 'node_modules', '.bin', 'vite');
  const built = spawnSync(vite, ['build'], { cwd: webRoot, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`vite build failed (exit ${built.status})`);
}

/**
 * The console's URL. The hub serves it at `/` once `registerWeb` is wired into the hub; until then this starts a
 * stand-in on the same origin as the API: the built files (index.html for unknown paths) and /v1 proxied to the hub.
 */
export async function consoleUrl(hubUrl: string): Promise<{ url: string; close: () => Promise<void> }> {
  const probe = await fetch(`${hubUrl}/`, { headers: { accept: 'text/html' } });
  if (probe.ok && (probe.headers.get('content-type') ?? '').startsWith('text/html'))
    return { url: hubUrl, close: async () => {} };
  const hub = new URL(hubUrl);
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    if (path.startsWith('/v1/') || path === '/v1') {
      const upstream = request(
        { host: hub.hostname, port: hub.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
      return;
    }
    const file = normalize(join(distDir, path));
    const found = file.startsWith(distDir + sep) && existsSync(file) && statSync(file).isFile();
    const type = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html' }[extname(file)];
    res.writeHead(200, { 'content-type': found ? (type ?? 'application/octet-stream') : 'text/html' });
    createReadStream(found ? file : join(distDir, 'index.html')).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';

export interface MetricsServer {
  registry: Registry;
  port: number;
  close(): Promise<void>;
}

/** Prometheus metrics on their own port, away from the API's traffic and auth. */
export async function startMetricsServer(
  opts: { host: string; port: number; prefix: string },
  registry: Registry = new Registry(),
): Promise<MetricsServer> {
  collectDefaultMetrics({ register: registry, prefix: `${opts.prefix}_` });
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, resolve);
  });
  return {
    registry,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

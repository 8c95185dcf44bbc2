import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RedfishSimulator } from './redfish/server.js';

/**
 * The simulator's own control API (not Redfish): tests and the demo read request
 * logs and power states here, to assert what the control plane did to the hardware.
 */
export async function startAdminServer(
  sim: RedfishSimulator,
  ids: string[],
  host: string,
  port: number,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const parts = (req.url ?? '/').split('?')[0]!.split('/').filter(Boolean);
    try {
      if (req.method === 'GET' && parts.length === 1 && parts[0] === 'bmcs') {
        return send(200, { items: ids.map((id) => ({ id, url: sim.bmcUrl(id), powerState: sim.bmc(id).powerState })) });
      }
      if (parts[0] === 'bmcs' && parts[1] && ids.includes(parts[1])) {
        const bmc = sim.bmc(parts[1]);
        if (req.method === 'GET' && parts.length === 2) return send(200, { id: parts[1], url: sim.bmcUrl(parts[1]), powerState: bmc.powerState });
        if (req.method === 'GET' && parts[2] === 'requests') return send(200, { items: bmc.log });
      }
      send(404, { error: `no route ${req.method} ${req.url}` });
    } catch (err) {
      send(500, { error: (err as Error).message });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

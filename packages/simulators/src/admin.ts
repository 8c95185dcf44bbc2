import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { switchRoute } from './nvos/admin-routes.js';
import type { NvosSimulator } from './nvos/simulator.js';
import { healthRoute } from './redfish/admin-health.js';
import { Faults } from './redfish/faults.js';
import type { RedfishSimulator } from './redfish/server.js';

/**
 * The simulator's own control API (not Redfish): tests and the demo read request logs and
 * power states here, and switch faults on and off, to assert what the control plane did to
 * the hardware and how it copes when the hardware misbehaves.
 *
 *   GET    /bmcs                      {items:[{id,url,powerState}]}
 *   GET    /stats                     {bmcs, requests}: requests every BMC of this process received since it started
 *   GET    /bmcs/:id                  {id,url,powerState,profile,rebooting,acLost,unresponsive,faults,events}
 *   GET    /bmcs/:id/requests         {items:[{at,method,path,status,body?}]} (last 1,000)
 *   GET    /bmcs/:id/actions          {items:[…]} every action request (POST …/Actions/…), none dropped
 *   DELETE /bmcs/:id/requests         clear the log (actions included)
 *   GET    /bmcs/:id/faults           current faults
 *   PUT    /bmcs/:id/faults           replace faults (body: Faults, {} clears)
 *   DELETE /bmcs/:id/faults           clear faults
 *   GET    /bmcs/:id/firmware         {items:[{id,version,staged?}], flashes:[{id,version,stamp,taskId,filename,at}]}
 *                                     flashes: every image a Completed update task staged, oldest first
 *   GET    /bmcs/:id/health           the tray's burn-in verdict {verdict: pass|fail, failures, gpus, cpus, memory,
 *                                     nvlink, leakDetectors, overheating} (a shelf's: psus, overheating); part faults,
 *                                     swaps and the unresponsive fault under /bmcs/:id/health/…
 *                                     (redfish/admin-health.ts)
 *   …      /switches[/:id[/…]]        simulated NVOS switches (routes in nvos/admin-routes.ts)
 */
export async function startAdminServer(
  sim: RedfishSimulator,
  ids: string[],
  host: string,
  port: number,
  nvos?: NvosSimulator,
): Promise<{ port: number; close(): Promise<void> }> {
  const known = new Set(ids);
  const server: Server = createServer((req, res) => {
    const send = (status: number, body?: unknown) => {
      if (body === undefined) return res.writeHead(status).end();
      return res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    handle(req)
      .then(([status, body]) => send(status, body))
      .catch((err: unknown) => send(500, { error: (err as Error).message }));
  });

  async function handle(req: IncomingMessage): Promise<[number, unknown?]> {
    const parts = (req.url ?? '/').split('?')[0]!.split('/').filter(Boolean);
    const method = req.method ?? 'GET';
    if (parts[0] === 'switches' && nvos) return switchRoute(nvos, method, parts.slice(1), () => readBody(req));
    if (method === 'GET' && parts.length === 1 && parts[0] === 'stats') {
      return [200, { bmcs: ids.length, requests: ids.reduce((n, id) => n + sim.bmc(id).requestsServed, 0) }];
    }
    if (method === 'GET' && parts.length === 1 && parts[0] === 'bmcs') {
      return [
        200,
        {
          items: ids.map((id) => ({
            id,
            url: sim.bmcUrl(id),
            powerState: sim.bmc(id).powerState,
            acLost: sim.bmc(id).acLost,
          })),
        },
      ];
    }
    const id = parts[1];
    if (parts[0] !== 'bmcs' || !id || !known.has(id)) return [404, { error: `no route ${method} ${req.url}` }];
    const bmc = sim.bmc(id);
    if (parts[2] === 'health') {
      const answer = await healthRoute(bmc, method, parts.slice(3), () => readBody(req));
      if (answer) return answer;
    }
    const sub = parts.length === 3 ? parts[2] : parts.length === 2 ? '' : undefined;
    if (sub === '' && method === 'GET') {
      return [
        200,
        {
          id,
          url: sim.bmcUrl(id),
          powerState: bmc.powerState,
          profile: bmc.profile.id,
          rebooting: bmc.rebooting,
          acLost: bmc.acLost,
          unresponsive: bmc.unresponsive ?? null,
          faults: bmc.faults,
          // Push deliveries to event subscribers: delivered, failed after every retry, dropped from a full queue.
          events: { subscriptions: bmc.subscribers?.size ?? 0, ...bmc.subscribers?.counts },
        },
      ];
    }
    if (sub === 'requests' && method === 'GET') return [200, { items: bmc.log }];
    if (sub === 'actions' && method === 'GET') return [200, { items: bmc.actionLog }];
    if (sub === 'requests' && method === 'DELETE') {
      bmc.clearLog();
      return [204];
    }
    if (sub === 'faults' && method === 'GET') return [200, bmc.faults];
    if (sub === 'faults' && method === 'DELETE') {
      bmc.setFaults({});
      return [204];
    }
    if (sub === 'faults' && method === 'PUT') {
      const parsed = Faults.safeParse(await readBody(req));
      if (!parsed.success)
        return [400, { error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') }];
      bmc.setFaults(parsed.data);
      return [200, bmc.faults];
    }
    if (sub === 'firmware' && method === 'GET') {
      const items = bmc.profile.firmware.map((f) => ({
        id: f.id,
        version: bmc.firmware(f).version,
        ...(bmc.staged(f.id) ? { staged: bmc.staged(f.id)!.version } : {}),
      }));
      return [200, { items, flashes: bmc.flashLog }];
    }
    return [404, { error: `no route ${method} ${req.url}` }];
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return undefined;
  }
}

import { randomInt } from 'node:crypto';
import { startAdminServer, startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';

/** A BMC simulator playing compute trays of one rack, with its admin API (tray health, faults) on 127.0.0.1. */
export interface TraySim {
  sim: RedfishSimulator;
  adminUrl: string;
  /** POST /bmcs/:id/health/faults */
  injectFault(tray: string, fault: Record<string, unknown>): Promise<void>;
  clearFaults(tray: string): Promise<void>;
  close(): Promise<void>;
}

export async function startTraySim(trays: { id: string; powerState?: 'On' | 'Off' }[]): Promise<TraySim> {
  const block = `127.${randomInt(2, 250)}.${randomInt(0, 250)}`;
  const port = 20_000 + randomInt(0, 20_000);
  const sim = await startRedfishSimulator({
    bmcs: trays.map((t, i) => ({
      id: t.id,
      profile: 'gb200-compute' as const,
      address: `${block}.${i + 1}`,
      port,
      username: 'admin',
      password: 'sekret',
      powerState: t.powerState ?? 'On',
      rack: 'burn-in-rack',
    })),
    timeScale: 0.01,
  });
  const admin = await startAdminServer(
    sim,
    trays.map((t) => t.id),
    '127.0.0.1',
    0,
  );
  const adminUrl = `http://127.0.0.1:${admin.port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${adminUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  };
  return {
    sim,
    adminUrl,
    injectFault: (tray, fault) => call('POST', `/bmcs/${tray}/health/faults`, fault),
    clearFaults: (tray) => call('DELETE', `/bmcs/${tray}/health/faults`),
    close: async () => {
      await admin.close();
      await sim.close();
    },
  };
}

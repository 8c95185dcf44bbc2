import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildFwpkg, DESCRIPTOR_UUID } from '@fleet/fwpkg';
import { startAdminServer } from '../src/admin.js';
import { startRedfishSimulator, type RedfishSimulator } from '../src/redfish/server.js';
import type { BmcSpec, Timings } from '../src/redfish/bmc.js';
import type { ProfileId } from '../src/redfish/profiles/index.js';

export const USER = 'admin';
export const PASSWORD = 'secret-pw';
export const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

let nextBlock = 0;
/** A fresh 127.x.y.0/24 per simulator so parallel test files never collide. */
function block(): string {
  return `127.${60 + (process.pid % 150)}.${nextBlock++ % 256}`;
}

export interface TestSim {
  sim: RedfishSimulator;
  adminUrl: string;
  url(id: string): string;
  close(): Promise<void>;
}

export async function startSim(
  bmcs: {
    id: string;
    profile?: ProfileId;
    sessionLimit?: number;
    powerState?: 'On' | 'Off';
    quirks?: BmcSpec['quirks'];
    rack?: string;
    serialNumber?: string;
    powerDomain?: string;
  }[],
  opts: { timeScale?: number; timings?: Partial<Timings> } = {},
): Promise<TestSim> {
  const net = block();
  const specs: BmcSpec[] = bmcs.map((b, i) => ({
    ...b,
    address: `${net}.${i + 1}`,
    port: 8443,
    username: USER,
    password: PASSWORD,
  }));
  const sim = await startRedfishSimulator({
    bmcs: specs,
    timeScale: opts.timeScale ?? 0.001,
    ...(opts.timings ? { timings: opts.timings } : {}),
  });
  const admin = await startAdminServer(
    sim,
    specs.map((s) => s.id),
    '127.0.0.1',
    0,
  );
  return {
    sim,
    adminUrl: `http://127.0.0.1:${admin.port}`,
    url: (id) => sim.bmcUrl(id),
    close: async () => {
      await admin.close();
      await sim.close();
    },
  };
}

export interface Res {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- Redfish JSON, asserted field by field
}

export async function rf(
  base: string,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; auth?: string | null } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth !== null) headers['authorization'] ??= opts.auth ?? basic;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export async function admin(t: TestSim, method: string, path: string, body?: unknown): Promise<Res> {
  const res = await fetch(`${t.adminUrl}${path}`, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Receiver {
  url: string;
  /** Every POST received, in arrival order (failed attempts included). */
  received: { body: Res['body']; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}

/**
 * An event subscriber for the tests: records every POST and answers `status(n)` for the n-th one (0-based), 204 by
 * default; `null` leaves the request unanswered.
 */
export async function startReceiver(status: (n: number) => number | null = () => 204): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const code = status(received.length);
      received.push({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')), headers: req.headers });
      if (code !== null) res.writeHead(code).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    received,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** Polls `fn` until it returns a value that is not undefined. */
export async function eventually<T>(fn: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

// ---- PLDM packages ---------------------------------------------------------------------------

export interface PkgComponent {
  identifier: number;
  stamp: number;
  version: string;
  size?: number;
}
export interface PkgDevice {
  uuid: string;
  /** Indexes into components. */
  components: number[];
}

/** A small but valid PLDM 1.0 package: one device record per UUID, the components' images filled with `imageFill`. */
export function buildPackage(devices: PkgDevice[], components: PkgComponent[], imageFill = 0x5a): Buffer {
  return buildFwpkg({
    revision: '1.0',
    packageVersion: 'SIM-PKG',
    devices: devices.map((d) => ({
      descriptors: [{ type: DESCRIPTOR_UUID, data: d.uuid }],
      applicableComponents: d.components,
      imageSetVersion: 'SIM-SET-1',
    })),
    components: components.map((c) => ({
      classification: 0x000a,
      identifier: c.identifier,
      comparisonStamp: c.stamp,
      version: c.version,
      image: { size: c.size ?? 64, fill: imageFill },
    })),
  });
}

/** multipart/form-data body with UpdateParameters and UpdateFile parts. */
export function multipart(
  params: unknown,
  file: Buffer,
  filename = 'tray.fwpkg',
): { body: Buffer; contentType: string } {
  const boundary = `----sim${Math.random().toString(16).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="UpdateParameters"\r\nContent-Type: ` +
        `application/json\r\n\r\n${JSON.stringify(params)}\r\n`,
    ),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="UpdateFile"; ` +
        `filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export async function push(base: string, params: unknown, file: Buffer, filename?: string): Promise<Res> {
  const { body, contentType } = multipart(params, file, filename);
  const res = await fetch(`${base}/redfish/v1/UpdateService/update-multipart`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': contentType },
    body,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Polls a task until it leaves New/Running. */
export async function finishedTask(base: string, location: string, timeoutMs = 5_000): Promise<Res['body']> {
  return eventually(async () => {
    const t = await rf(base, 'GET', location);
    // 503 while the BMC reboots: keep polling, as a client would.
    if (t.status === 503 || t.body.TaskState === 'New' || t.body.TaskState === 'Running') return undefined;
    return t.body;
  }, timeoutMs);
}

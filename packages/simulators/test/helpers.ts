import { crc32 } from '../src/redfish/pldm.js';
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
  bmcs: { id: string; profile?: ProfileId; sessionLimit?: number; powerState?: 'On' | 'Off' }[],
  opts: { timeScale?: number; timings?: Partial<Timings> } = {},
): Promise<TestSim> {
  const net = block();
  const specs: BmcSpec[] = bmcs.map((b, i) => ({ ...b, address: `${net}.${i + 1}`, port: 8443, username: USER, password: PASSWORD }));
  const sim = await startRedfishSimulator({ bmcs: specs, timeScale: opts.timeScale ?? 0.001, ...(opts.timings ? { timings: opts.timings } : {}) });
  const admin = await startAdminServer(sim, specs.map((s) => s.id), '127.0.0.1', 0);
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

export async function rf(base: string, method: string, path: string, opts: { body?: unknown; headers?: Record<string, string>; auth?: string | null } = {}): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth !== null) headers['authorization'] ??= opts.auth ?? basic;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export async function admin(t: TestSim, method: string, path: string, body?: unknown): Promise<Res> {
  const res = await fetch(`${t.adminUrl}${path}`, { method, ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

// ---- PLDM packages (DSP0267 1.0 layout) ----------------------------------------------------

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

/** A small but valid PLDM 1.0 package: header, device records, component table, checksum, images. */
export function buildPackage(devices: PkgDevice[], components: PkgComponent[], imageFill = 0x5a): Buffer {
  const u8 = (v: number) => Buffer.from([v]);
  const u16 = (v: number) => { const b = Buffer.alloc(2); b.writeUInt16LE(v); return b; };
  const u32 = (v: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(v >>> 0); return b; };
  const str = (s: string) => Buffer.concat([u8(1), u8(Buffer.byteLength(s)), Buffer.from(s)]);
  const records = devices.map((d) => {
    let bits = 0;
    for (const c of d.components) bits |= 1 << c;
    const setVersion = Buffer.from('SIM-SET-1');
    const descriptor = Buffer.concat([u16(0x0002), u16(16), Buffer.from(d.uuid, 'hex')]);
    const body = Buffer.concat([u8(1), u32(0), u8(1), u8(setVersion.length), u16(0), u8(bits), setVersion, descriptor]);
    return Buffer.concat([u16(body.length + 2), body]);
  });
  const version = str('SIM-PKG');
  const fixedLen = 16 + 1 + 2 + 13 + 2 + version.length;
  const recordsLen = 1 + records.reduce((n, r) => n + r.length, 0);
  const componentEntryLen = (c: PkgComponent) => 2 + 2 + 4 + 2 + 2 + 4 + 4 + 2 + Buffer.byteLength(c.version);
  const componentsLen = 2 + components.reduce((n, c) => n + componentEntryLen(c), 0);
  const headerSize = fixedLen + recordsLen + componentsLen + 4;
  let offset = headerSize;
  const table = components.map((c) => {
    const size = c.size ?? 64;
    const entry = Buffer.concat([u16(10), u16(c.identifier), u32(c.stamp), u16(0), u16(0), u32(offset), u32(size), str(c.version)]);
    offset += size;
    return entry;
  });
  const header = Buffer.concat([
    Buffer.from('f018878ccb7d49439800a02f059aca02', 'hex'),
    u8(1),
    u16(headerSize),
    Buffer.alloc(13),
    u16(8),
    version,
    u8(records.length),
    ...records,
    u16(components.length),
    ...table,
  ]);
  const images = Buffer.alloc(offset - headerSize, imageFill);
  return Buffer.concat([header, u32(crc32(header)), images]);
}

/** multipart/form-data body with UpdateParameters and UpdateFile parts. */
export function multipart(params: unknown, file: Buffer, filename = 'tray.fwpkg'): { body: Buffer; contentType: string } {
  const boundary = `----sim${Math.random().toString(16).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="UpdateParameters"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(params)}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="UpdateFile"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export async function push(base: string, params: unknown, file: Buffer, filename?: string): Promise<Res> {
  const { body, contentType } = multipart(params, file, filename);
  const res = await fetch(`${base}/redfish/v1/UpdateService/update-multipart`, { method: 'POST', headers: { authorization: basic, 'content-type': contentType }, body });
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

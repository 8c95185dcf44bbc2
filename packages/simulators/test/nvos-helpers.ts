import { connect } from 'node:net';
import ssh2, { type Client } from 'ssh2';
import { startAdminServer } from '../src/admin.js';
import { startNvosSimulator, type NvosSimulator } from '../src/nvos/simulator.js';
import type { NvosTimings, SwitchSpec } from '../src/nvos/switch.js';
import { startRedfishSimulator } from '../src/redfish/server.js';

export const USER = 'admin';
export const PASSWORD = 'switch-pw';

export interface SwitchSim {
  nvos: NvosSimulator;
  adminUrl: string;
  close(): Promise<void>;
}

/** Switches on 127.0.0.1 with free ports, plus the admin API (no BMCs). */
export async function startSwitches(
  switches: (Partial<SwitchSpec> & { id: string })[],
  opts: { timeScale?: number; timings?: Partial<NvosTimings> } = {},
): Promise<SwitchSim> {
  const specs: SwitchSpec[] = switches.map((s) => ({
    address: '127.0.0.1',
    nvuePort: 0,
    sshPort: 0,
    username: USER,
    password: PASSWORD,
    nvosVersion: '25.02.4282',
    ...s,
  }));
  const nvos = await startNvosSimulator({
    switches: specs,
    timeScale: opts.timeScale ?? 0.001,
    ...(opts.timings ? { timings: opts.timings } : {}),
  });
  const bmcs = await startRedfishSimulator({ bmcs: [] });
  const admin = await startAdminServer(bmcs, [], '127.0.0.1', 0, nvos);
  return {
    nvos,
    adminUrl: `http://127.0.0.1:${admin.port}`,
    close: async () => {
      await admin.close();
      await nvos.close();
      await bmcs.close();
    },
  };
}

export interface Res {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- NVUE JSON, asserted field by field
}

async function call(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // text/plain answers stay text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** An NVUE request to switch `id`; path below /nvue_v1. */
export function nv(
  t: SwitchSim,
  id: string,
  method: string,
  path: string,
  opts: { body?: unknown; user?: string; password?: string } = {},
): Promise<Res> {
  const auth = `Basic ${Buffer.from(`${opts.user ?? USER}:${opts.password ?? PASSWORD}`).toString('base64')}`;
  return call(`${t.nvos.nvueUrl(id)}/nvue_v1${path}`, method, opts.body, { authorization: auth });
}

export function admin(t: SwitchSim, method: string, path: string, body?: unknown): Promise<Res> {
  return call(`${t.adminUrl}${path}`, method, body);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a value that is not undefined. */
export async function eventually<T>(fn: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

type Auth = { user?: string; password?: string };

/**
 * Creates a revision, stages the changes, applies it and returns its final body (polled with `pollAuth`, for password
 * changes).
 */
export async function applyRevision(
  t: SwitchSim,
  id: string,
  changes: { path: string; body: unknown }[],
  auth: Auth = {},
  pollAuth: Auth = auth,
): Promise<Res['body']> {
  const rev = (await nv(t, id, 'POST', '/revision', { body: {}, ...auth })).body as string;
  for (const c of changes) {
    const staged = await nv(t, id, 'PATCH', `${c.path}?rev=${rev}`, { body: c.body, ...auth });
    if (staged.status !== 200) throw new Error(`stage ${c.path}: ${JSON.stringify(staged.body)}`);
  }
  await nv(t, id, 'PATCH', `/revision/${rev}`, {
    body: { state: 'apply', 'auto-prompt': { ays: 'ays_yes' } },
    ...auth,
  });
  return eventually(async () => {
    const r = await nv(t, id, 'GET', `/revision/${rev}`, pollAuth);
    return r.status === 200 && r.body.state !== 'applying' && r.body.state !== 'pending' ? r.body : undefined;
  });
}

/** Polls an action to its end state. */
export function finishedAction(
  t: SwitchSim,
  id: string,
  actionId: string,
  auth: { user?: string; password?: string } = {},
): Promise<Res['body']> {
  return eventually(async () => {
    const r = await nv(t, id, 'GET', `/action/${actionId}`, auth);
    return r.status === 200 && r.body.state !== 'start' && r.body.state !== 'action_running' ? r.body : undefined;
  });
}

/** An ssh2 client logged in to switch `id`; rejects when the login is refused. */
export function sshLogin(
  t: SwitchSim,
  id: string,
  auth: { user?: string; password?: string; privateKey?: string } = {},
): Promise<Client> {
  const { host, port } = t.nvos.ssh(id);
  return new Promise((resolve, reject) => {
    const c = new ssh2.Client();
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    c.connect({
      host,
      port,
      username: auth.user ?? USER,
      ...(auth.privateKey ? { privateKey: auth.privateKey } : { password: auth.password ?? PASSWORD }),
      readyTimeout: 5_000,
    });
  });
}

export const b64 = (s: string) => Buffer.from(s).toString('base64');
export const APPLY = { state: 'apply', 'auto-prompt': { ays: 'ays_yes' } };

/** True when a fresh TCP connection to the switch's NVUE port is refused (nothing listens). */
export function nvueRefused(t: SwitchSim, id: string): Promise<boolean> {
  const { hostname, port } = new URL(t.nvos.nvueUrl(id));
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: Error & { code?: string }) => resolve(err.code === 'ECONNREFUSED'));
  });
}

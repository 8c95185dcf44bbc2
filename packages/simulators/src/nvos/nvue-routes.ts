import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { z } from 'zod';
import { actionBody, type Action } from './actions.js';
import {
  CaImport,
  CertificateImport,
  FactoryReset,
  FirmwareInstall,
  ImageFetch,
  ImageInstall,
  ImageUninstall,
  parseBody,
  PowerCycle,
  RevisionApply,
  RevisionCreate,
  RevisionSave,
} from './nvue-bodies.js';
import { refuseChange } from './nvos-config.js';
import * as ops from './operations.js';
import { revisionBody } from './revisions.js';
import { firmwareComponents, type FirmwareComponent, type SimulatedSwitch } from './switch.js';

export const BASE = '/nvue_v1';

export interface NvueReply {
  status: number;
  /** Serialized as JSON. */
  json?: unknown;
  /** Sent as text/plain (the platform-firmware install answers with the bare job id). */
  text?: string;
  headers?: Record<string, string>;
}

/** An NVUE error answer (problem+json, as NVUE writes them); thrown by handlers. */
export class NvueProblem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }

  get reply(): NvueReply {
    return {
      status: this.status,
      json: { status: this.status, title: STATUS_CODES[this.status], detail: this.detail, type: 'about:blank' },
      ...(this.headers ? { headers: this.headers } : {}),
    };
  }
}

export interface NvueExchange {
  sw: SimulatedSwitch;
  req: IncomingMessage;
  method: string;
  /** Below /nvue_v1, without slashes at either end: `system/image`. */
  path: string;
  query: URLSearchParams;
  /** What the client sent, secrets masked, for the request log. */
  logged?: unknown;
}

const MAX_BODY = 1 << 20;

/** Dispatches one authenticated NVUE request. */
export async function routeNvue(x: NvueExchange): Promise<NvueReply> {
  const { sw, method, path } = x;
  if (method === 'GET') {
    const body = readResource(sw, path);
    if (body === undefined) throw new NvueProblem(404, `${BASE}/${path} not found`);
    return { status: 200, json: body };
  }
  const body = await readJson(x);
  if (method === 'POST') return post(x, body);
  if (method === 'PATCH') return patch(x, body);
  throw new NvueProblem(405, `${method} is not supported on ${BASE}/${path}`);
}

// ---- reads ------------------------------------------------------------------------------------

type Reader = (sw: SimulatedSwitch, m: RegExpExecArray) => unknown;

const readers: [RegExp, Reader][] = [
  [
    /^system$/,
    (sw) => ({
      hostname: sw.spec.id,
      build: `NVOS ${sw.currentBuild}`,
      'product-name': 'NVOS',
      uptime: Math.round((Date.now() - sw.bootedAt) / 1000),
    }),
  ],
  [
    /^system\/version$/,
    (sw) => ({
      image: sw.currentBuild,
      'product-name': 'NVOS',
      'product-release': sw.currentBuild,
      kernel: '6.1.0-nvos-amd64',
    }),
  ],
  [/^system\/image$/, (sw) => imageBody(sw)],
  [
    /^system\/image\/files$/,
    (sw) => Object.fromEntries(sw.fs.filesUnder('/host/nos-images').map(([p]) => [p.split('/').pop()!, { path: p }])),
  ],
  [
    /^system\/image\/files\/([^/]+)$/,
    (sw, m) => (sw.fs.file(`/host/nos-images/${m[1]}`) ? { path: `/host/nos-images/${m[1]}` } : undefined),
  ],
  [
    /^system\/aaa\/user$/,
    (sw) => Object.fromEntries(Object.entries(sw.config.users).map(([u, v]) => [u, { role: v.role }])),
  ],
  [
    /^system\/aaa\/user\/([^/]+)$/,
    (sw, m) => (sw.config.users[m[1]!] ? { role: sw.config.users[m[1]!]!.role, 'hashed-password': '*' } : undefined),
  ],
  [/^system\/api$/, (sw) => ({ state: 'enabled', certificate: sw.config.api.certificate ?? 'self-signed' })],
  [/^system\/api\/mtls$/, (sw) => ({ 'ca-certificate': sw.config.api.mtlsCa })],
  [/^system\/gnmi-server$/, (sw) => ({ state: sw.config.gnmi.state, certificate: sw.config.gnmi.certificate })],
  [/^system\/gnmi-server\/mtls$/, (sw) => ({ 'ca-certificate': sw.config.gnmi.mtlsCa })],
  [
    /^system\/security\/certificate$/,
    (sw) => Object.fromEntries([...sw.certificates.keys()].map((id) => [id, certificateBody(sw, id)])),
  ],
  [/^system\/security\/certificate\/([^/]+)$/, (sw, m) => certificateBody(sw, m[1]!)],
  [
    /^system\/security\/ca-certificate$/,
    (sw) => Object.fromEntries([...sw.caCertificates].map(([id, c]) => [id, { 'valid-to': c.validTo }])),
  ],
  [
    /^system\/security\/ca-certificate\/([^/]+)$/,
    (sw, m) => sw.caCertificates.get(m[1]!) && { 'valid-to': sw.caCertificates.get(m[1]!)!.validTo },
  ],
  [/^revision$/, (sw) => Object.fromEntries(sw.revisions.all().map((r) => [r.id, revisionBody(r)]))],
  [/^revision\/([^/]+)$/, (sw, m) => sw.revisions.get(m[1]!) && revisionBody(sw.revisions.get(m[1]!)!)],
  [/^action$/, (sw) => Object.fromEntries(sw.actions.all().map((a) => [a.id, actionBody(a)]))],
  [/^action\/([^/]+)$/, (sw, m) => sw.actions.get(m[1]!) && actionBody(sw.actions.get(m[1]!)!)],
  [
    /^platform\/firmware$/,
    (sw) => Object.fromEntries(firmwareComponents.map((c) => [c.toUpperCase(), firmwareBody(sw, c)])),
  ],
  [/^platform\/firmware\/([^/]+)$/, (sw, m) => withComponent(m[1]!, (c) => firmwareBody(sw, c))],
];

/** The JSON NVUE would answer for `GET /nvue_v1/<path>`, or undefined for no such resource. */
export function readResource(sw: SimulatedSwitch, path: string): unknown {
  for (const [pattern, read] of readers) {
    const m = pattern.exec(path);
    if (m) return read(sw, m);
  }
  return undefined;
}

/** Newer NVOS names partitions in current/next and nests build ids; older NVOS gives build ids throughout. */
function imageBody(sw: SimulatedSwitch): Record<string, unknown> {
  const { partitions, current, next } = sw.image;
  if (sw.spec.imageShape === 'string')
    return {
      current: partitions[current],
      next: partitions[next],
      partition1: partitions[1],
      partition2: partitions[2],
    };
  const part = (build: string | undefined) => build && { 'build-id': build };
  return {
    current: `partition${current}`,
    next: `partition${next}`,
    partition1: part(partitions[1]),
    partition2: part(partitions[2]),
    'issu-status': 'disabled',
  };
}

function certificateBody(sw: SimulatedSwitch, id: string): unknown {
  const cert = sw.certificates.get(id);
  if (!cert) return undefined;
  const installed = [
    sw.config.api.certificate === id && 'nvue-rest-api',
    sw.config.gnmi.certificate === id && 'gnmi-server',
  ].filter(Boolean);
  return { 'valid-to': cert.validTo, installed };
}

function firmwareBody(sw: SimulatedSwitch, c: FirmwareComponent): Record<string, unknown> {
  return { 'actual-firmware': sw.firmware[c].actual, 'installed-firmware': sw.firmware[c].installed, type: c };
}

function withComponent<T>(name: string, fn: (c: FirmwareComponent) => T): T | undefined {
  const c = firmwareComponents.find((x) => x === name.toLowerCase());
  return c && fn(c);
}

// ---- writes -----------------------------------------------------------------------------------

function post(x: NvueExchange, body: unknown): NvueReply {
  const { sw, path } = x;
  let m: RegExpExecArray | null;
  if (path === 'revision') {
    exact(x, RevisionCreate, body);
    // The new revision's id as a JSON string (test-peers item 5).
    return { status: 200, json: sw.revisions.create().id };
  }
  if (path === 'system') {
    exact(x, PowerCycle, body);
    return started(ops.powerCycle(sw));
  }
  if (path === 'system/factory-default') {
    exact(x, FactoryReset, body);
    return started(ops.factoryReset(sw));
  }
  if (path === 'system/image') {
    if (typeof body === 'object' && body !== null && '@fetch' in body) {
      return started(ops.fetchImage(sw, exact(x, ImageFetch, body)['@fetch'].parameters['remote-url']));
    }
    exact(x, ImageUninstall, body);
    return started(ops.uninstallImage(sw));
  }
  if ((m = /^system\/image\/files\/([^/]+)$/.exec(path))) {
    const file = decodeURIComponent(m[1]!);
    if (exact(x, ImageInstall, body)['@install'].parameters['image-file'] !== file)
      throw new NvueProblem(400, `image-file must name ${file}`);
    return started(ops.installImage(sw, file));
  }
  if ((m = /^system\/security\/ca-certificate\/([A-Za-z0-9._-]+)$/.exec(path))) {
    return started(ops.importCaCertificate(sw, m[1]!, exact(x, CaImport, body, maskPem)['@import'].parameters));
  }
  if ((m = /^system\/security\/certificate\/([A-Za-z0-9._-]+)$/.exec(path))) {
    return started(
      ops.importEntityCertificate(sw, m[1]!, exact(x, CertificateImport, body, maskPem)['@import'].parameters),
    );
  }
  if ((m = /^platform\/firmware\/([^/]+)\/files\/([^/]+)$/.exec(path))) {
    const file = decodeURIComponent(m[2]!);
    const req = exact(x, FirmwareInstall, body);
    const action = withComponent(m[1]!, (c) => ops.installFirmware(sw, c, file, req['@install'].parameters.force));
    if (!action) throw new NvueProblem(404, `no firmware component ${m[1]}`);
    // nvfwupd reads this response as the bare job id, not JSON.
    return { status: 202, text: action.id };
  }
  throw new NvueProblem(readResource(sw, path) === undefined ? 404 : 405, `POST is not supported on ${BASE}/${path}`);
}

function patch(x: NvueExchange, body: unknown): NvueReply {
  const { sw, path } = x;
  if (path === 'revision/applied') {
    exact(x, RevisionSave, body);
    sw.save();
    return { status: 200, json: {} };
  }
  const m = /^revision\/([^/]+)$/.exec(path);
  if (m) {
    exact(x, RevisionApply, body);
    const r = sw.revisions.get(m[1]!);
    if (!r) throw new NvueProblem(404, `revision ${m[1]} not found`);
    sw.applyRevision(r);
    return { status: 200, json: revisionBody(r) };
  }
  x.logged = maskPassword(body);
  const rev = x.query.get('rev');
  if (!rev) throw new NvueProblem(400, 'configuration changes need a ?rev= revision');
  const r = sw.revisions.get(rev);
  if (!r) throw new NvueProblem(404, `revision ${rev} not found`);
  if (r.state !== 'pending') throw new NvueProblem(409, `revision ${rev} is ${r.state}, not pending`);
  const change = { path, body: body as Record<string, unknown> };
  const refused = refuseChange(change);
  if (refused) throw new NvueProblem(400, refused);
  r.changes.push(change);
  return { status: 200, json: x.logged };
}

/** Parses the body against its exact schema (400 otherwise) and logs it, masked if need be. */
function exact<T>(x: NvueExchange, schema: z.ZodType<T>, body: unknown, mask: (b: unknown) => unknown = (b) => b): T {
  x.logged = mask(body);
  const parsed = parseBody(schema, body);
  if (typeof parsed === 'string') throw new NvueProblem(400, parsed);
  return parsed;
}

/** NVUE answers an action with its id as a JSON string. */
const started = (action: Action): NvueReply => ({ status: 202, json: action.id });

function maskPassword(body: unknown): unknown {
  const b = body as { password?: unknown } | undefined;
  return b && typeof b === 'object' && 'password' in b ? { ...b, password: '***' } : body;
}

function maskPem(body: unknown): unknown {
  const params = (body as { '@import'?: { parameters?: { data?: unknown } } } | undefined)?.['@import']?.parameters;
  if (!params || typeof params.data !== 'string') return body;
  const b = body as { '@import': Record<string, unknown> };
  return { '@import': { ...b['@import'], parameters: { ...params, data: '<PEM masked>' } } };
}

async function readJson(x: NvueExchange): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of x.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new NvueProblem(413, 'request body too large');
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new NvueProblem(400, 'request body is not JSON');
  }
}

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RedfishError } from '../../src/index.js';
import { serve, type TestServer } from './servers.js';

// Fault injection for the device-client fuzzers (Redfish here, NVUE reuses it): a seeded PRNG, JSON and HTTP
// mutations of a clean answer, and the checks every fuzzed operation must pass. A failure names the seed, the case
// and each mutation served, so it replays alone: FLEET_FUZZ_SEED=<seed> FLEET_FUZZ_CASES=<n>.

export const fuzzSeed = Number(process.env['FLEET_FUZZ_SEED'] ?? 0x5eed_b3c);

/** Cases to run: FLEET_FUZZ_CASES for a longer run, else the CI default. */
export function fuzzCases(ciDefault: number): number {
  const n = Number(process.env['FLEET_FUZZ_CASES']);
  return Number.isInteger(n) && n > 0 ? n : ciDefault;
}

export type Rand = (n: number) => number;

/** mulberry32: small, fast and good enough to pick mutations. */
export function prng(seed: number): Rand {
  let s = seed;
  return (n) => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** Each case its own stream, so one case replays without the ones before it. */
export const caseRand = (seed: number, i: number): Rand => prng((seed ^ Math.imul(i + 1, 0x9e3779b9)) | 0);

const pick = <T>(rand: Rand, list: readonly T[]): T => list[rand(list.length)]!;

/** Links a broken service might write: relative, another host, `..`, nonexistent, unparsable, not a string. */
const oddLinks: readonly unknown[] = [
  'Chassis/1',
  'http://198.51.100.7/redfish/v1/Chassis',
  '//other.example/redfish/v1/Systems',
  '/redfish/v1/../../../etc/passwd',
  '/redfish/v1/Nowhere/42',
  'http://[::1',
  '',
  '/redfish/v1/%ZZ',
  'file:///etc/passwd',
  42,
  { '@odata.id': '/redfish/v1' },
];

const otherType = (rand: Rand, v: unknown): unknown => {
  const choices: unknown[] = ['str', 7, -1.5e308, { a: 1 }, null, [1, 'x'], true];
  const kind = (x: unknown) => (x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x);
  const others = choices.filter((c) => kind(c) !== kind(v));
  return pick(rand, others);
};

interface Slot {
  parent: Record<string, unknown> | unknown[];
  key: string | number;
  depth: number;
}

function slots(v: unknown, out: Slot[] = [], depth = 0): Slot[] {
  if (depth > 12 || v === null || typeof v !== 'object') return out;
  const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  for (const [key, child] of entries) {
    out.push({ parent: v as Slot['parent'], key, depth });
    slots(child, out, depth + 1);
  }
  return out;
}

const get = (s: Slot) => (s.parent as Record<string | number, unknown>)[s.key];
const set = (s: Slot, v: unknown) => ((s.parent as Record<string | number, unknown>)[s.key] = v);

/** One structural mutation of a parsed document, in place; says what it did. */
function mutateValue(doc: unknown, rand: Rand): string {
  const all = slots(doc);
  if (all.length === 0) return 'nothing to mutate';
  const links = all.filter(
    (s) => s.key === '@odata.id' || (typeof get(s) === 'string' && /^\/redfish\//.test(String(get(s)))),
  );
  const kind = rand(10);
  if (kind === 0 && links.length) {
    const s = pick(rand, links);
    const to = pick(rand, oddLinks);
    set(s, to);
    return `link ${String(s.key)} -> ${JSON.stringify(to)}`;
  }
  if (kind === 1 && links.length) {
    const s = pick(rand, links);
    if (Array.isArray(s.parent)) s.parent.splice(s.key as number, 1);
    else delete s.parent[s.key as string];
    return `drop link ${String(s.key)}`;
  }
  // Half the time a property near the top, where the readers look (TaskState, Members, Status.Health…).
  const shallow = all.filter((x) => x.depth <= 1);
  const s = pick(rand, rand(2) === 0 && shallow.length ? shallow : all);
  switch (kind) {
    case 2: {
      if (Array.isArray(s.parent)) s.parent.splice(s.key as number, 1);
      else delete s.parent[s.key as string];
      return `drop ${String(s.key)}`;
    }
    case 3: {
      const huge = 'x'.repeat(100_000 + rand(200_000));
      set(s, huge);
      return `${String(s.key)} = string of ${huge.length}`;
    }
    case 4: {
      const n = 20_000 + rand(50_000);
      set(
        s,
        Array.from({ length: n }, () => get(s)),
      );
      return `${String(s.key)} = array of ${n} copies`;
    }
    case 5: {
      const v = get(s);
      set(s, typeof v === 'string' ? `${v.slice(0, 3)}\u0000${v.slice(3)}` : '\u0000');
      return `${String(s.key)} with a NUL`;
    }
    default: {
      const to = otherType(rand, get(s));
      set(s, to);
      return `${String(s.key)} = ${JSON.stringify(to)}`;
    }
  }
}

/** A clean answer the server would give, before any mutation. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** How a mutated answer is delivered: written now, or one of the misbehaviours that need the socket. */
export type Delivery =
  | { kind: 'answer'; answer: Answer }
  | { kind: 'stall-after-headers' }
  | { kind: 'stall-silent' }
  | { kind: 'reset' }
  | { kind: 'huge-body'; bytes: number };

const garbageBodies = [
  '<html><body>Internal Server Error</body></html>',
  '{"error": {"message": 5, "@Message.ExtendedInfo": "not a list"}}',
  '{"error": {"@Message.ExtendedInfo": [null, {"Message": {"x": 1}}]}}',
  '{"error": null}',
  '\u0000\u0001\u0002',
  '{"error": {"message": "',
  'null',
  '[]',
];

/**
 * One mutation of `clean`. `hugeBytes` is the size of the oversized body (above the client's limit);
 * `allowStall` is false once a case has stalled once, to keep each case within a few request timeouts.
 */
export function mutateAnswer(
  clean: Answer,
  rand: Rand,
  opts: { hugeBytes: number; allowStall: boolean; self: string },
): { delivery: Delivery; how: string } {
  const kinds = [
    'value',
    'value',
    'value',
    'value',
    'value',
    'value',
    'value',
    'value',
    'truncate',
    'invalid-utf8',
    'nul-bytes',
    'content-type',
    'empty-200',
    'error-status',
    'retry-after',
    'redirect',
    'huge-body',
    'reset',
    ...(opts.allowStall ? ['stall-after-headers', 'stall-silent'] : []),
  ] as const;
  const kind = pick(rand, kinds);
  const answer = (a: Partial<Answer>, how: string) => ({
    delivery: { kind: 'answer' as const, answer: { ...clean, ...a, headers: { ...clean.headers, ...a.headers } } },
    how,
  });
  const text = clean.body.toString('utf8');
  switch (kind) {
    case 'value': {
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch {
        return answer({}, 'unchanged (not JSON)');
      }
      const how = mutateValue(doc, rand);
      return answer({ body: Buffer.from(JSON.stringify(doc) ?? '') }, how);
    }
    case 'truncate': {
      const at = rand(Math.max(1, clean.body.length));
      return answer({ body: clean.body.subarray(0, at) }, `truncated to ${at} of ${clean.body.length}`);
    }
    case 'invalid-utf8': {
      const at = rand(clean.body.length + 1);
      const bad = Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]);
      return answer(
        { body: Buffer.concat([clean.body.subarray(0, at), bad, clean.body.subarray(at)]) },
        `invalid UTF-8 at ${at}`,
      );
    }
    case 'nul-bytes': {
      const at = rand(clean.body.length + 1);
      return answer(
        { body: Buffer.concat([clean.body.subarray(0, at), Buffer.alloc(4), clean.body.subarray(at)]) },
        `NUL bytes at ${at}`,
      );
    }
    case 'content-type': {
      const type = pick(rand, ['text/html', 'application/octet-stream', 'application/json; charset=latin1', '']);
      return answer({ headers: { 'content-type': type } }, `content-type ${JSON.stringify(type)}`);
    }
    case 'empty-200':
      return answer({ status: 200, body: Buffer.alloc(0) }, 'empty 200');
    case 'error-status': {
      const status = pick(rand, [400, 401, 403, 404, 405, 409, 412, 429, 500, 501, 502, 503, 504, 599]);
      const body = pick(rand, garbageBodies);
      return answer(
        { status, body: Buffer.from(body), headers: { 'content-type': 'application/json' } },
        `HTTP ${status} with ${JSON.stringify(body.slice(0, 40))}`,
      );
    }
    case 'retry-after': {
      const value = pick(rand, ['soon', '-5', '1e400', '99999999999', 'Wed, 21 Oct 2015 07:28:00 GMT', '0.001', '']);
      return answer(
        { status: 503, body: Buffer.from('{}'), headers: { 'retry-after': value } },
        `503 Retry-After ${JSON.stringify(value)}`,
      );
    }
    case 'redirect': {
      const to = pick(rand, [opts.self, 'http://198.51.100.7/redfish/v1', '/redfish/v1/loop']);
      return answer(
        { status: pick(rand, [301, 302, 307]), body: Buffer.alloc(0), headers: { location: to } },
        `redirect to ${to}`,
      );
    }
    case 'huge-body':
      return { delivery: { kind: 'huge-body', bytes: opts.hugeBytes }, how: `body of ${opts.hugeBytes} bytes` };
    case 'reset':
      return { delivery: { kind: 'reset' }, how: 'connection reset' };
    case 'stall-after-headers':
      return { delivery: { kind: 'stall-after-headers' }, how: 'headers, then nothing' };
    default:
      return { delivery: { kind: 'stall-silent' }, how: 'nothing at all' };
  }
}

/** Writes a delivery to the response; stalls leave it open (the server's close ends them). */
export function deliver(res: ServerResponse, d: Delivery): void {
  switch (d.kind) {
    case 'answer': {
      const headers = Object.fromEntries(Object.entries(d.answer.headers).filter(([, v]) => v !== ''));
      res.writeHead(d.answer.status, { ...headers, 'content-length': d.answer.body.length });
      res.end(d.answer.body);
      return;
    }
    case 'stall-after-headers':
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
      res.write('{"Id": ');
      return;
    case 'stall-silent':
      return;
    case 'reset':
      res.socket?.destroy();
      return;
    case 'huge-body': {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let left = d.bytes;
      res.write('{"Members": [');
      const pump = () => {
        while (left > 0) {
          left -= chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end(']}');
      };
      // The client hangs up once it has seen enough: stop writing then.
      res.on('close', () => (left = 0));
      pump();
      return;
    }
  }
}

/** A request the fuzzing server saw and what it did to the answer. */
export interface FuzzLogEntry {
  line: string;
  how: string;
}

/**
 * A handler serving `clean(req, path)` answers, each mutated with probability `rate` by the case's PRNG;
 * at most one stall per case. `reset()` starts a new case.
 */
export function fuzzingHandler(
  clean: (req: IncomingMessage, path: string) => Answer | Promise<Answer>,
  opts: { hugeBytes: number; self: (path: string) => string },
) {
  let rand: Rand = prng(0);
  let rate = 0;
  let stalled = false;
  const log: FuzzLogEntry[] = [];
  return {
    log,
    reset(r: Rand) {
      rand = r;
      // Some cases mutate little (they get deep into the operation), some a lot.
      rate = pick(rand, [0.05, 0.2, 0.5]);
      stalled = false;
      log.length = 0;
    },
    handler: async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
      const answer = await clean(req, path);
      const line = `${req.method} ${path}`;
      if (rand(1000) >= rate * 1000) {
        log.push({ line, how: 'clean' });
        return deliver(res, { kind: 'answer', answer });
      }
      const { delivery, how } = mutateAnswer(answer, rand, {
        hugeBytes: opts.hugeBytes,
        allowStall: !stalled,
        self: opts.self(path),
      });
      if (delivery.kind.startsWith('stall')) stalled = true;
      log.push({ line, how });
      deliver(res, delivery);
    },
  };
}

/** The mutations a case served, for its failure message. */
export const describeLog = (log: readonly FuzzLogEntry[]) =>
  log
    .filter((e) => e.how !== 'clean')
    .map((e) => `  ${e.line}: ${e.how}`)
    .join('\n') || '  (no mutation)';

/**
 * Records unhandled rejections and uncaught exceptions while fuzzing; `assertNone` fails if any fired. Installing
 * the listeners stops Node from crashing on them, so the test can name the case instead.
 */
export function watchProcess(): { assertNone(): void; stop(): void } {
  const seen: string[] = [];
  const onRejection = (reason: unknown) =>
    seen.push(`unhandledRejection: ${(reason as Error)?.stack ?? String(reason)}`);
  const onException = (err: Error) => seen.push(`uncaughtException: ${err.stack ?? String(err)}`);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return {
    assertNone: () => assert.deepEqual(seen, [], seen.join('\n')),
    stop: () => {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
    },
  };
}

/** Runs `op` against a hard ceiling so a hang fails the case (naming it) instead of the whole test file. */
export async function withCeiling<T>(op: () => Promise<T>, ms: number, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const ceiling = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`HANG: ${label} still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([op(), ceiling]);
  } finally {
    clearTimeout(timer);
  }
}

/** Counts outcomes by name, for the coverage checks at the end of a run. */
export class Tally {
  readonly seen = new Map<string, number>();
  count(key: string): void {
    this.seen.set(key, (this.seen.get(key) ?? 0) + 1);
  }
  has(prefix: string): boolean {
    return [...this.seen.keys()].some((k) => k.startsWith(prefix));
  }
  toString(): string {
    return JSON.stringify(Object.fromEntries([...this.seen].sort()));
  }
}

/** A loopback server answering `clean` through a fuzzing handler; mutated links to "self" point back at it. */
export async function fuzzedServer(
  clean: (req: IncomingMessage, path: string) => Answer | Promise<Answer>,
  hugeBytes: number,
): Promise<{ server: TestServer; fuzz: ReturnType<typeof fuzzingHandler> }> {
  let url = '';
  const fuzz = fuzzingHandler(clean, { hugeBytes, self: (p) => `${url}${p}` });
  const server = await serve(fuzz.handler);
  url = server.url;
  return { server, fuzz };
}

export type FuzzOp<C> = readonly [name: string, run: (client: C) => Promise<unknown>, ...extra: unknown[]];

/**
 * The fuzz loop the client fuzzers share: case i runs on `targets[i % n]` one of its operations, picked by the case's
 * PRNG, through a fresh client. Each outcome must be a result or what `typedOutcome` accepts (it asserts and names
 * the kind), within `budgetMs` of the requests the case made; the client is closed every time. Returns the tally.
 */
export async function runFuzzCases<C extends { close(): Promise<unknown> }, E = object>(o: {
  cases: number;
  targets: readonly (FuzzTarget<C> & E)[];
  open: (target: FuzzTarget<C> & E, op: FuzzOp<C>) => C;
  typedOutcome: (err: unknown, target: FuzzTarget<C> & E, label: string) => string;
  budgetMs: (requests: number) => number;
  ceilingMs: number;
  /** Checks of the case's own (what the server saw), after its outcome. */
  afterCase?: (target: FuzzTarget<C> & E, label: string) => void;
}): Promise<Tally> {
  const tally = new Tally();
  for (let i = 0; i < o.cases; i++) {
    const target = o.targets[i % o.targets.length]!;
    const { server, fuzz } = target;
    const rand = caseRand(fuzzSeed, i);
    const op = target.ops[rand(target.ops.length)]!;
    const [opName, run] = op;
    fuzz.reset(rand);
    const client = o.open(target, op);
    const label = () => `seed ${fuzzSeed} case ${i} (${target.name}: ${opName})\n${describeLog(fuzz.log)}`;
    const before = server.requests.length;
    const started = performance.now();
    try {
      await withCeiling(() => run(client), o.ceilingMs, label());
      tally.count(`${opName}: ok`);
    } catch (err) {
      tally.count(`${opName}: ${o.typedOutcome(err, target, label())}`);
    } finally {
      await withCeiling(() => client.close(), 5_000, `close of ${label()}`);
    }
    const elapsed = performance.now() - started;
    const requests = server.requests.length - before;
    assert.ok(elapsed <= o.budgetMs(requests), `${label()}\ntook ${Math.round(elapsed)} ms for ${requests} requests`);
    o.afterCase?.(target, label());
  }
  return tally;
}

export interface FuzzTarget<C> {
  name: string;
  server: TestServer;
  fuzz: ReturnType<typeof fuzzingHandler>;
  ops: readonly FuzzOp<C>[];
}

/** The error a fuzzed operation may end with: typed, naming the BMC and the URI it was about. */
export function assertTypedRedfishError(err: unknown, bmc: string, label: string): RedfishError {
  assert.ok(err instanceof RedfishError, `${label}\n${err instanceof Error ? err.stack : String(err)}`);
  assert.equal(err.bmc, bmc, label);
  assert.ok(err.uri.length > 0, `${label}: no URI in ${err.message}`);
  assert.ok(err.message.includes(bmc) && err.message.includes(err.uri), `${label}: ${err.message}`);
  return err;
}

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createApiToken } from '@fleet/db';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clientCredentialsToken, openIdProvider, signingKey } from '../apps/hub/test/helpers/oidc-provider.js';
import { schemathesis } from '../apps/hub/test/helpers/schemathesis.js';
import { fleetDataConverter, startTemporalDevServer } from '@fleet/temporal';
import { EncryptionCodec, parseKeyRing, randomKeyRingDocument } from '@fleet/temporal/codec';
import { load } from './lib/page-load.js';
import { runTrivialBaseline } from './lib/trivial-workflow-run.js';
import { startSeededHub, type SeededHub } from './lib/seeded-hub.js';

/** The same authenticated list request on every side: compute trays of one site, a page of 100. */
const path = '/v1/devices?site_id=site-01&role=compute-tray&limit=100';
const clients = 20;

/** One side: a hub and a keep-alive pool of `clients` connections to it (trusting its CA over HTTPS). */
function side(what: string, hub: SeededHub & { bearer?: string }) {
  const dispatcher = new Agent({ connections: clients, ...(hub.ca ? { connect: { ca: hub.ca } } : {}) });
  const page = async () => {
    const res = await request(`${hub.url}${path}`, {
      headers: { authorization: `Bearer ${hub.bearer ?? hub.token}` },
      dispatcher,
    });
    const body = (await res.body.json()) as { items?: unknown[] };
    if (res.statusCode !== 200) throw new Error(`${what}: ${res.statusCode} ${JSON.stringify(body)}`);
    return body.items!.length;
  };
  return { what, page, dispatcher, requests: 0, seconds: 0 };
}

/** Workflow throughput with the payload codec over without, alternating rounds on one dev server. */
async function codecOverhead(workflows: number, rounds: number) {
  const temporal = await startTemporalDevServer();
  const codec = new EncryptionCodec(parseKeyRing(randomKeyRingDocument(), 'bench'));
  const sides = [
    { dataConverter: fleetDataConverter(), workflows: 0, seconds: 0 },
    { dataConverter: fleetDataConverter(codec), workflows: 0, seconds: 0 },
  ];
  try {
    for (let i = 0; i < rounds; i++)
      for (const s of sides) {
        const r = await runTrivialBaseline({
          address: temporal.address,
          devices: workflows,
          concurrency: 50,
          activities: 3,
          holdMs: 0,
          dataConverter: s.dataConverter,
        });
        s.workflows += workflows;
        s.seconds += r.makespanS;
      }
  } finally {
    await temporal.stop();
  }
  const [plain, encrypted] = sides.map((s) => Number((s.workflows / s.seconds).toFixed(1)));
  return { plain: plain!, encrypted: encrypted!, ratio: Number((encrypted! / plain!).toFixed(2)) };
}

/**
 * What security costs: the same authenticated device page from 20 concurrent clients over plain HTTP with an API
 * token, over HTTPS (TLS 1.3, P-256 certificate, kept-alive connections) with the same kind of token, and over plain
 * HTTP with an OIDC access token (RS256 JWT from oidc-provider in this process, verified on every request), each hub
 * a process of its own over its own copy of the same seeded database, in alternating rounds so that every side sees
 * the same machine load; schemathesis fuzzing every route of the plain hub with an admin token, counting its requests
 * and 5xx answers; and the Temporal payload codec: trivial device workflows (3 activities each, 50 at a time) with and
 * without the codec (and failures as payloads) on one dev server, in alternating rounds, as workflows per second.
 * Arguments: devices, requests per side, rounds, fuzz examples per operation, workflows per codec round.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const devices = Number(args[0] ?? 2000);
  const requests = Number(args[1] ?? 6000);
  const rounds = Number(args[2] ?? 3);
  const maxExamples = Number(args[3] ?? 4);
  const workflows = Number(args[4] ?? 300);
  const codec = await codecOverhead(workflows, rounds);
  const plainHub = await startSeededHub({ name: 'security-plain', devices, role: 'viewer' });
  const tlsHub = await startSeededHub({ name: 'security-tls', devices, role: 'viewer', tls: true }).catch(
    async (err: unknown) => {
      await plainHub.close();
      throw err;
    },
  );
  // The OIDC side: a provider in this process, a hub that trusts it, a person whose group reads.
  const audience = 'https://hub.bench';
  const idp = createServer((req, res) => provider.callback()(req, res));
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const provider = openIdProvider(issuer, [await signingKey('bench')], { reader: ['fleet-viewers'] }, audience);
  const jwtHub = await startSeededHub({
    name: 'security-jwt',
    devices,
    role: 'viewer',
    hubConfig: () => ({ oidc: { issuer, audience, roleMapping: { 'fleet-viewers': { role: 'viewer' } } } }),
  });
  const bearer = await clientCredentialsToken(issuer, 'reader', audience);
  const reportDir = await mkdtemp(join(tmpdir(), 'fleet-bench-security-'));
  const sides = [side('plain', plainHub), side('tls', tlsHub), side('jwt', { ...jwtHub, bearer })];
  try {
    const expected = await sides[0]!.page();
    for (let i = 0; i < rounds; i++)
      for (const s of sides) {
        await load(`${s.what} warm-up`, s.page, 5 * clients, clients, expected);
        const t0 = performance.now();
        const r = await load(s.what, s.page, Math.ceil(requests / rounds), clients, expected);
        if (r.errors) throw new Error(`${s.what}: ${r.errors} requests failed`);
        s.seconds += (performance.now() - t0) / 1000;
        s.requests += r.times.length;
      }
    const [plain, tls, jwt] = sides.map((s) => Math.round(s.requests / s.seconds));

    const admin = (await createApiToken(plainHub.db, 'bench-security-fuzz', 'admin')).token;
    const started = performance.now();
    const fuzz = await schemathesis(`${plainHub.url}/openapi.json`, admin, reportDir, 'fuzz', [], maxExamples);
    return {
      devices,
      concurrent_clients: clients,
      requests_per_s_plain: plain,
      requests_per_s_tls: tls,
      tls_over_plain: Number((tls! / plain!).toFixed(2)),
      requests_per_s_jwt: jwt,
      jwt_over_plain: Number((jwt! / plain!).toFixed(2)),
      codec_overhead_ratio: codec.ratio,
      workflows_per_s_plain: codec.plain,
      workflows_per_s_codec: codec.encrypted,
      fuzz_requests: fuzz.requests,
      fuzz_5xx: fuzz.serverErrors,
      fuzz_checks_passed: fuzz.code === 0,
      fuzz_s: Math.round((performance.now() - started) / 1000),
      requests_per_side: requests,
      rounds,
    };
  } finally {
    for (const s of sides) await s.dispatcher.close();
    await Promise.all([plainHub.close(), tlsHub.close(), jwtHub.close()]);
    idp.close();
    await rm(reportDir, { recursive: true, force: true });
  }
}

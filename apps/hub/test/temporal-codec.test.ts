import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createApiToken } from '@fleet/db';
import { EncryptionCodec, encryptedEncoding } from '@fleet/temporal/codec';
import { startTestHub, type TestHub } from './helpers/test-hub.js';

/** A payload as Temporal's default converter writes a JSON value. */
const jsonPayload = (value: unknown) => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(value)),
});
const ring = (id: string) => ({ activeKeyId: id, keys: new Map([[id, randomBytes(32)]]) });
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
type Wire = { metadata: Record<string, string>; data: string };
const toWire = (p: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }): Wire => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
  data: b64(p.data ?? new Uint8Array()),
});

// The codec server the Temporal UI calls: decrypts with the hub's copy of the key ring, for admins only.
describe('POST /v1/temporal-codec/{decode,encode}', () => {
  let hub: TestHub;
  let bare: TestHub;
  const codec = new EncryptionCodec(ring('k1'));
  const ui = 'https://temporal.example.com';
  const input = { deviceId: 'dev-1', bmcUrl: 'https://10.0.0.9', credentialRef: 'bmc/default' };

  before(async () => {
    [hub, bare] = await Promise.all([
      startTestHub({ temporalCodec: codec, temporalCodecOrigins: [ui] }),
      startTestHub(),
    ]);
  });
  after(async () => {
    await Promise.all([hub?.close(), bare?.close()]);
  });

  const post = async (op: string, body: unknown, token: string, on = hub) => {
    const res = await on.app.inject({
      method: 'POST',
      url: `/v1/temporal-codec/${op}`,
      headers: { authorization: `Bearer ${token}` },
      payload: body as object,
    });
    return { status: res.statusCode, body: res.json() as { payloads: Wire[]; error?: { message: string } } };
  };

  it('decodes encrypted payloads for an admin and passes plain ones through', async () => {
    const plain = jsonPayload(input);
    const [encrypted] = await codec.encode([plain]);
    const res = await post('decode', { payloads: [toWire(encrypted!), toWire(plain)] }, hub.tokens.admin);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.payloads, [toWire(plain), toWire(plain)]);
  });

  it("with a ring per site it decodes any site's payloads but refuses to encode (which site?) with a 409", async () => {
    const perSite = {
      encrypts: false,
      active: async () => {
        throw new Error('per site');
      },
      find: async (id: string) => (id === 'k1' ? ring('k1').keys.get('k1') : undefined),
    };
    const sited = await startTestHub({ temporalCodec: new EncryptionCodec(perSite) });
    try {
      const res = await post('encode', { payloads: [toWire(jsonPayload(input))] }, sited.tokens.admin, sited);
      assert.equal(res.status, 409);
      assert.match(res.body.error!.message, /per site .*only decodes/);
    } finally {
      await sited.close();
    }
  });

  it('encodes with the active key, which the codec decodes back', async () => {
    const plain = jsonPayload(input);
    const res = await post('encode', { payloads: [toWire(plain)] }, hub.tokens.admin);
    assert.equal(res.status, 200);
    const wire = res.body.payloads[0]!;
    assert.equal(Buffer.from(wire.metadata['encoding']!, 'base64').toString(), encryptedEncoding);
    const back = await codec.decode([
      {
        metadata: Object.fromEntries(Object.entries(wire.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
        data: Buffer.from(wire.data, 'base64'),
      },
    ]);
    assert.deepEqual(JSON.parse(Buffer.from(back[0]!.data!).toString()), input);
  });

  it('refuses viewers, operators and site-limited admins (403) and callers without a token (401)', async () => {
    const [encrypted] = await codec.encode([jsonPayload(input)]);
    const body = { payloads: [toWire(encrypted!)] };
    for (const token of [hub.tokens.viewer, hub.tokens.operator]) {
      const res = await post('decode', body, token);
      assert.equal(res.status, 403);
      assert.ok(!JSON.stringify(res.body).includes('dev-1'));
    }
    const siteAdmin = await createApiToken(hub.handle.db, 't-site-admin', 'admin', { sites: ['s-1'] });
    assert.equal((await post('decode', body, siteAdmin.token)).status, 403);
    const anonymous = await hub.app.inject({ method: 'POST', url: '/v1/temporal-codec/decode', payload: body });
    assert.equal(anonymous.statusCode, 401);
  });

  it('names the payload whose key the ring lacks, and refuses without a key ring', async () => {
    const [foreign] = await new EncryptionCodec(ring('k9')).encode([jsonPayload(input)]);
    const res = await post('decode', { payloads: [toWire(foreign!)] }, hub.tokens.admin);
    assert.equal(res.status, 400);
    assert.match(res.body.error!.message, /body\.payloads\.0: .*key k9/);
    const none = await post('decode', { payloads: [] }, bare.tokens.admin, bare);
    assert.equal(none.status, 409);
    const bad = await post('decode', { payloads: [{ data: 'not base64!' }] }, hub.tokens.admin);
    assert.equal(bad.status, 400);
  });

  it("answers the Temporal UI's preflight for its own origin only, and lets that page read the answer", async () => {
    const preflight = (origin: string, on = hub) =>
      on.app.inject({
        method: 'OPTIONS',
        url: '/v1/temporal-codec/decode',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
      });
    const ok = await preflight(ui);
    assert.equal(ok.statusCode, 204);
    assert.equal(ok.headers['access-control-allow-origin'], ui);
    assert.match(String(ok.headers['access-control-allow-headers']), /authorization/);
    for (const res of [await preflight('https://evil.example.com'), await preflight(ui, bare)]) {
      assert.notEqual(res.statusCode, 204);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
    }

    const [encrypted] = await codec.encode([jsonPayload(input)]);
    const call = (origin: string, token: string) =>
      hub.app.inject({
        method: 'POST',
        url: '/v1/temporal-codec/decode',
        headers: { origin, authorization: `Bearer ${token}` },
        payload: { payloads: [toWire(encrypted!)] },
      });
    const fromUi = await call(ui, hub.tokens.admin);
    assert.equal(fromUi.statusCode, 200);
    assert.equal(fromUi.headers['access-control-allow-origin'], ui);
    // A viewer signed in to the UI is refused all the same, and the UI can show why.
    const viewer = await call(ui, hub.tokens.viewer);
    assert.equal(viewer.statusCode, 403);
    assert.equal(viewer.headers['access-control-allow-origin'], ui);
    const elsewhere = await call('https://evil.example.com', hub.tokens.admin);
    assert.equal(elsewhere.headers['access-control-allow-origin'], undefined);
  });
});

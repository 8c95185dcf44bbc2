import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import {
  EncryptionCodec,
  PayloadDecryptionError,
  encryptedEncoding,
  keyIdMetadata,
  openPayloadKeys,
  parseKeyRing,
  randomKeyRingDocument,
  SiteKeyRings,
  type KeyRing,
} from '../src/codec.js';

const key = () => randomBytes(32);
const ring = (activeKeyId: string, keys: Record<string, Buffer>): KeyRing => ({
  activeKeyId,
  keys: new Map(Object.entries(keys)),
});
const input = { deviceId: 'dev-7f3a', bmcUrl: 'https://10.1.2.3', credentialRef: 'bmc/default' };
const plain = () => defaultPayloadConverter.toPayload(input);
const meta = (p: { metadata?: Record<string, Uint8Array> | null }, k: string) =>
  Buffer.from(p.metadata?.[k] ?? []).toString();

test('encode hides the payload, metadata included, and decode gives it back', async () => {
  const codec = new EncryptionCodec(ring('k1', { k1: key() }));
  const [encoded] = await codec.encode([plain()]);
  assert.equal(meta(encoded!, 'encoding'), encryptedEncoding);
  assert.equal(meta(encoded!, keyIdMetadata), 'k1');
  assert.deepEqual(Object.keys(encoded!.metadata!).sort(), ['encoding', keyIdMetadata].sort());
  const bytes = Buffer.from(encoded!.data!);
  for (const s of ['dev-7f3a', '10.1.2.3', 'bmc/default', 'json/plain']) assert.ok(!bytes.includes(s), s);
  const [decoded] = await codec.decode([encoded!]);
  assert.deepEqual(defaultPayloadConverter.fromPayload(decoded!), input);
  assert.equal(meta(decoded!, 'encoding'), 'json/plain');
  // A fresh IV each time: the same input never gives the same ciphertext.
  const [again] = await codec.encode([plain()]);
  assert.notDeepEqual(Buffer.from(again!.data!), bytes);
});

test('after a rotation, payloads encrypted with the old key still decode; new ones use the new key', async () => {
  const [k1, k2] = [key(), key()];
  const [old] = await new EncryptionCodec(ring('k1', { k1 })).encode([plain()]);
  const rotated = new EncryptionCodec(ring('k2', { k1, k2 }));
  assert.deepEqual(defaultPayloadConverter.fromPayload((await rotated.decode([old!]))[0]!), input);
  const [fresh] = await rotated.encode([plain()]);
  assert.equal(meta(fresh!, keyIdMetadata), 'k2');
});

test('a payload under a key id the ring lacks is a PayloadDecryptionError naming the id', async () => {
  const [encoded] = await new EncryptionCodec(ring('gone', { gone: key() })).encode([plain()]);
  const codec = new EncryptionCodec(ring('k1', { k1: key() }));
  await assert.rejects(
    codec.decode([encoded!]),
    (err: unknown) =>
      err instanceof PayloadDecryptionError &&
      err.keyId === 'gone' &&
      err.reason === 'unknown-key' &&
      err.message.includes('gone'),
  );
});

test('an altered ciphertext, or another key under the same id, fails authentication', async () => {
  const codec = new EncryptionCodec(ring('k1', { k1: key() }));
  const [encoded] = await codec.encode([plain()]);
  const data = Buffer.from(encoded!.data!);
  data[20] = data[20]! ^ 1;
  const isAuthFailure = (err: unknown) =>
    err instanceof PayloadDecryptionError && err.reason === 'authentication-failed' && err.message.includes('k1');
  await assert.rejects(codec.decode([{ ...encoded!, data }]), isAuthFailure);
  await assert.rejects(new EncryptionCodec(ring('k1', { k1: key() })).decode([encoded!]), isAuthFailure);
  await assert.rejects(codec.decode([{ ...encoded!, data: data.subarray(0, 20) }]), PayloadDecryptionError);
});

test('payloads that are not encrypted pass through decode unchanged', async () => {
  const codec = new EncryptionCodec(ring('k1', { k1: key() }));
  const payloads = [plain(), defaultPayloadConverter.toPayload(undefined), { data: new Uint8Array([1]) }];
  assert.deepEqual(await codec.decode(payloads), payloads);
});

test('a key ring document is checked field by field, its values never echoed', () => {
  const k = randomBytes(32).toString('base64');
  const parsed = parseKeyRing(JSON.stringify({ activeKeyId: 'a', keys: { a: k } }), 'ring.json');
  assert.equal(parsed.keys.get('a')!.length, 32);
  const short = randomBytes(16).toString('base64');
  assert.throws(
    () => parseKeyRing(JSON.stringify({ activeKeyId: 'b', keys: { a: short } }), 'ring.json'),
    (err: Error) =>
      err.message.includes('ring.json') &&
      err.message.includes('keys.a') &&
      err.message.includes('activeKeyId') &&
      !err.message.includes(short),
  );
  assert.throws(() => parseKeyRing('not json', 'ring.json'), /key ring ring.json is not JSON/);
});

test('per-site rings: a site encrypts with its own key, any site decrypts, and no other ring reads it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-rings-'));
  writeFileSync(join(dir, 'dc-a.json'), randomKeyRingDocument('dc-a-k1'));
  writeFileSync(join(dir, 'dc-b.json'), randomKeyRingDocument('dc-b-k1'));
  const keys = await openPayloadKeys({ keyRingDir: dir });
  const [fromA] = await new EncryptionCodec(keys.forSite('dc-a')).encode([plain()]);
  assert.equal(meta(fromA!, keyIdMetadata), 'dc-a-k1');
  const reader = new EncryptionCodec(keys.anySite());
  assert.equal(reader.encrypts, false);
  await assert.rejects(reader.encode([plain()]), /per site/);
  assert.deepEqual(defaultPayloadConverter.fromPayload((await reader.decode([fromA!]))[0]!), input);
  const siteB = parseKeyRing(readFileSync(join(dir, 'dc-b.json'), 'utf8'), 'dc-b');
  await assert.rejects(
    new EncryptionCodec(siteB).decode([fromA!]),
    (err: unknown) => err instanceof PayloadDecryptionError && err.reason === 'unknown-key',
  );
  // A site without a ring file is named, with the file it looked for.
  await assert.rejects(new EncryptionCodec(keys.forSite('dc-z')).encode([plain()]), /site dc-z: .*dc-z\.json/);
});

test('per-site rings: a site added after start is read on first use, and key ids are unique across sites', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-rings-'));
  writeFileSync(join(dir, 'dc-a.json'), randomKeyRingDocument('dc-a-k1'));
  const rings = await SiteKeyRings.open(dir, { rescanMs: 0 });
  writeFileSync(join(dir, 'dc-c.json'), randomKeyRingDocument('dc-c-k1'));
  const [fromC] = await new EncryptionCodec(rings.forSite('dc-c')).encode([plain()]);
  assert.deepEqual(
    defaultPayloadConverter.fromPayload((await new EncryptionCodec(rings.anySite()).decode([fromC!]))[0]!),
    input,
  );
  // A reader that started before dc-c existed finds its key by reading the folder again.
  const early = await SiteKeyRings.open(dir, { rescanMs: 0 });
  writeFileSync(join(dir, 'dc-d.json'), randomKeyRingDocument('dc-d-k1'));
  const [fromD] = await new EncryptionCodec((await SiteKeyRings.open(dir)).forSite('dc-d')).encode([plain()]);
  assert.ok((await new EncryptionCodec(early.anySite()).decode([fromD!]))[0]);

  writeFileSync(join(dir, 'dc-e.json'), randomKeyRingDocument('dc-a-k1'));
  await assert.rejects(SiteKeyRings.open(dir), /dc-a-k1 is in the rings of both dc-a and dc-e/);
});

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { z } from 'zod';

/** Payload metadata of an encrypted payload (docs/security.md, "Temporal payload encryption"). */
export const encryptedEncoding = 'binary/encrypted';
export const keyIdMetadata = 'encryption-key-id';

// CommonJS: the namespace is on the default export under ESM.
const ProtoPayload = proto.temporal.api.common.v1.Payload;
const ivBytes = 12;
const tagBytes = 16;
const text = new TextEncoder();
const fromText = new TextDecoder();

/** Keys by id; payloads are encrypted with the active one and decrypted with the one their metadata names. */
export interface KeyRing {
  activeKeyId: string;
  keys: ReadonlyMap<string, Buffer>;
}

/** A payload the ring cannot decrypt: its key is not in the ring, or it was altered (the GCM tag fails). */
export class PayloadDecryptionError extends Error {
  constructor(
    readonly keyId: string,
    readonly reason: 'unknown-key' | 'authentication-failed' | 'malformed',
  ) {
    super(
      reason === 'unknown-key'
        ? `payload encrypted with key ${keyId}, which is not in the key ring`
        : reason === 'malformed'
          ? `payload encrypted with key ${keyId} is too short to be a ciphertext`
          : `payload encrypted with key ${keyId} failed authentication (altered, or a different key under that id)`,
    );
    this.name = 'PayloadDecryptionError';
  }
}

const KeyRingDocument = z
  .object({
    activeKeyId: z.string().min(1),
    /** Key id → the 32-byte AES-256 key, base64. */
    keys: z.record(
      z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'key ids are letters, digits, dot, dash, underscore'),
      z
        .string()
        .refine((k) => Buffer.from(k, 'base64').length === 32, 'must be 32 bytes, base64 (openssl rand -base64 32)'),
    ),
  })
  .strict()
  .refine((d) => d.activeKeyId in d.keys, { message: 'must name a key of the ring', path: ['activeKeyId'] });

/**
 * Parses a key ring document, `{"activeKeyId": "...", "keys": {"<id>": "<base64 of 32 bytes>"}}`. Errors name the
 * source and the fields, never a value.
 */
export function parseKeyRing(document: string, source: string): KeyRing {
  let json: unknown;
  try {
    json = JSON.parse(document);
  } catch {
    throw new Error(`key ring ${source} is not JSON`);
  }
  const parsed = KeyRingDocument.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`key ring ${source} is malformed: ${issues.join('; ')}`);
  }
  const keys = new Map(Object.entries(parsed.data.keys).map(([id, k]) => [id, Buffer.from(k, 'base64')]));
  return { activeKeyId: parsed.data.activeKeyId, keys };
}

/** A key ring file (mode 0600), read once: a rotation restarts the processes (docs/security.md). */
export async function readKeyRingFile(path: string): Promise<KeyRing> {
  return parseKeyRing(await readFile(path, 'utf8'), path);
}

/** A new ring with one random key, as a document: the dev stack and the test harness make one per stack. */
export function randomKeyRingDocument(keyId = 'k1'): string {
  return JSON.stringify({ activeKeyId: keyId, keys: { [keyId]: randomBytes(32).toString('base64') } });
}

/**
 * AES-256-GCM over each whole serialized Payload (metadata included, so the original encoding is hidden too):
 * data = iv(12) | ciphertext | tag(16). Payloads not marked encrypted pass through decode, so histories from before
 * encryption still replay.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly ring: KeyRing) {
    if (!ring.keys.has(ring.activeKeyId)) throw new Error(`active key ${ring.activeKeyId} is not in the key ring`);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const keyId = this.ring.activeKeyId;
    const key = this.ring.keys.get(keyId)!;
    return payloads.map((payload) => {
      const iv = randomBytes(ivBytes);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const plain = ProtoPayload.encode(payload).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { encoding: text.encode(encryptedEncoding), [keyIdMetadata]: text.encode(keyId) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.['encoding'];
      if (!encoding || fromText.decode(encoding) !== encryptedEncoding) return payload;
      const idBytes = payload.metadata?.[keyIdMetadata];
      const keyId = idBytes ? fromText.decode(idBytes) : '(none)';
      const key = this.ring.keys.get(keyId);
      if (!key) throw new PayloadDecryptionError(keyId, 'unknown-key');
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < ivBytes + tagBytes) throw new PayloadDecryptionError(keyId, 'malformed');
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, ivBytes));
      decipher.setAuthTag(data.subarray(data.length - tagBytes));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(data.subarray(ivBytes, data.length - tagBytes)), decipher.final()]);
      } catch {
        throw new PayloadDecryptionError(keyId, 'authentication-failed');
      }
      return ProtoPayload.decode(plain);
    });
  }
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
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

/** Where a codec finds its keys: the one new payloads are encrypted with, and any by its id. */
export interface KeySource {
  /** False for a decryption-only source, whose `active` throws. */
  readonly encrypts: boolean;
  /** Throws when this source encrypts nothing (decryption only). */
  active(): Promise<{ id: string; key: Buffer }>;
  find(keyId: string): Promise<Buffer | undefined>;
}

function ringSource(ring: KeyRing): KeySource {
  if (!ring.keys.has(ring.activeKeyId)) throw new Error(`active key ${ring.activeKeyId} is not in the key ring`);
  return {
    encrypts: true,
    active: async () => ({ id: ring.activeKeyId, key: ring.keys.get(ring.activeKeyId)! }),
    find: async (keyId) => ring.keys.get(keyId),
  };
}

/**
 * Key rings per site (docs/security.md, "Keys per site"): `<dir>/<siteId>.json`, each the ring document that site's
 * satellite holds in its secret store. A site's payloads are encrypted with its own active key, so a satellite
 * holding only its ring cannot read another site's; the workflow agent and the hub's codec endpoint decrypt with the
 * key a payload names, whichever site's it is. Key ids are unique across sites. The folder is read at start (a
 * malformed ring stops the process there); a site added later has its file read when first used, and a key id no
 * loaded ring has makes the folder be read again, at most every `rescanMs`.
 */
export class SiteKeyRings {
  private readonly rings = new Map<string, KeyRing>();
  private readonly owners = new Map<string, string>();
  private lastScan = 0;

  private constructor(
    readonly dir: string,
    private readonly rescanMs: number,
  ) {}

  static async open(dir: string, { rescanMs = 5_000 } = {}): Promise<SiteKeyRings> {
    const rings = new SiteKeyRings(dir, rescanMs);
    await rings.scan();
    return rings;
  }

  /** The source a site's payloads are encrypted with; it decrypts any site's. */
  forSite(siteId: string): KeySource {
    return {
      encrypts: true,
      active: async () => {
        const ring = await this.ring(siteId);
        return { id: ring.activeKeyId, key: ring.keys.get(ring.activeKeyId)! };
      },
      find: (keyId) => this.find(keyId),
    };
  }

  /** Decryption only, for whatever reads payloads without knowing their site (listings, the codec endpoint). */
  anySite(): KeySource {
    return {
      encrypts: false,
      active: async () => {
        throw new Error(`payload key rings are per site (${this.dir}): encrypting needs the site`);
      },
      find: (keyId) => this.find(keyId),
    };
  }

  private async ring(siteId: string): Promise<KeyRing> {
    const loaded = this.rings.get(siteId);
    if (loaded) return loaded;
    const path = join(this.dir, `${siteId}.json`);
    let document: string;
    try {
      document = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw new Error(`no payload key ring for site ${siteId}: ${path} does not exist`, { cause: err });
      throw err;
    }
    return this.add(siteId, parseKeyRing(document, path));
  }

  private async find(keyId: string): Promise<Buffer | undefined> {
    const owner = this.owners.get(keyId);
    if (owner) return this.rings.get(owner)!.keys.get(keyId);
    if (Date.now() - this.lastScan < this.rescanMs) return undefined;
    await this.scan();
    const found = this.owners.get(keyId);
    return found ? this.rings.get(found)!.keys.get(keyId) : undefined;
  }

  private async scan(): Promise<void> {
    this.lastScan = Date.now();
    for (const name of (await readdir(this.dir)).filter((n) => n.endsWith('.json')).sort()) {
      const siteId = name.slice(0, -'.json'.length);
      const path = join(this.dir, name);
      this.add(siteId, parseKeyRing(await readFile(path, 'utf8'), path));
    }
  }

  private add(siteId: string, ring: KeyRing): KeyRing {
    for (const keyId of ring.keys.keys()) {
      const owner = this.owners.get(keyId);
      if (owner && owner !== siteId)
        throw new Error(`payload key id ${keyId} is in the rings of both ${owner} and ${siteId}: ids must be unique`);
    }
    const previous = this.rings.get(siteId);
    for (const keyId of previous?.keys.keys() ?? []) this.owners.delete(keyId);
    this.rings.set(siteId, ring);
    for (const keyId of ring.keys.keys()) this.owners.set(keyId, siteId);
    return ring;
  }
}

/**
 * AES-256-GCM over each whole serialized Payload (metadata included, so the original encoding is hidden too):
 * data = iv(12) | ciphertext | tag(16). Payloads not marked encrypted pass through decode, so histories from before
 * encryption still replay.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly keys: KeySource;

  constructor(keys: KeyRing | KeySource) {
    this.keys = 'activeKeyId' in keys ? ringSource(keys) : keys;
  }

  /** Whether encode works: not with decryption-only keys (per-site rings, no site given). */
  get encrypts(): boolean {
    return this.keys.encrypts;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { id: keyId, key } = await this.keys.active();
    return payloads.map((payload) => {
      const iv = randomBytes(ivBytes);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const plain = ProtoPayload.encode(payload).finish();
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { encoding: text.encode(encryptedEncoding), [keyIdMetadata]: text.encode(keyId) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    const out: Payload[] = [];
    for (const payload of payloads) {
      const encoding = payload.metadata?.['encoding'];
      if (!encoding || fromText.decode(encoding) !== encryptedEncoding) {
        out.push(payload);
        continue;
      }
      const idBytes = payload.metadata?.[keyIdMetadata];
      const keyId = idBytes ? fromText.decode(idBytes) : '(none)';
      const key = await this.keys.find(keyId);
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
      out.push(ProtoPayload.decode(plain));
    }
    return out;
  }
}

/** A process's payload keys (its config's keyRingFile or keyRingDir): per site, and for payloads of any site. */
export interface PayloadKeys {
  forSite(siteId: string): KeySource;
  /** Decrypts any site's payloads; encrypts only with one ring for every site. */
  anySite(): KeySource;
}

export async function openPayloadKeys(config: { keyRingFile?: string; keyRingDir?: string }): Promise<PayloadKeys> {
  if (config.keyRingDir) {
    const rings = await SiteKeyRings.open(config.keyRingDir);
    return { forSite: (siteId) => rings.forSite(siteId), anySite: () => rings.anySite() };
  }
  if (!config.keyRingFile) throw new Error('payload encryption needs keyRingFile or keyRingDir');
  const one = ringSource(await readKeyRingFile(config.keyRingFile));
  return { forSite: () => one, anySite: () => one };
}

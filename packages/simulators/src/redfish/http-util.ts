import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { redfishError } from './errors.js';

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const MAX_JSON = 1 << 20;

/** Weak ETag over the serialized body: any visible change gives a new tag. */
export function etagOf(body: unknown): string {
  return `W/"${createHash('sha1').update(JSON.stringify(body)).digest('hex').slice(0, 16)}"`;
}

/** True when an If-Match / If-None-Match header value names `etag` (or is `*`). */
export function matchesEtag(header: string, etag: string): boolean {
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => t.trim() === '*' || strip(t) === strip(etag));
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_JSON) throw redfishError(413, 'PayloadTooLarge');
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw redfishError(400, 'MalformedJSON');
  }
}

/** Reads and discards a request body we are not going to use. */
export async function drain(req: IncomingMessage): Promise<void> {
  for await (const _ of req as AsyncIterable<Buffer>) void _;
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

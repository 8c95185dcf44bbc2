import { z } from 'zod';
import { invalid } from './errors.js';

export const limitSchema = z.coerce.number().int().min(1).max(1000).default(100);

/** Opaque keyset cursors: base64url of the last row's sort key; an empty one is the first page. */
export function encodeCursor(key: unknown[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor<T extends z.ZodType>(cursor: string | undefined, shape: T): z.infer<T> | undefined {
  if (!cursor) return undefined;
  try {
    const parsed = shape.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // falls through to the error below
  }
  throw invalid('query.cursor', 'malformed cursor; pass the next_cursor of a previous page unchanged');
}

/** A query parameter given once or repeated (`?state=a&state=b`), as a list. */
export const repeated = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]), z.array(item).optional());

/** Of `limit + 1` rows, the page (the first `limit`) and the cursor after its last row; null on the last page. */
export function cursorPage<R>(
  rows: R[],
  limit: number,
  keyOf: (last: R) => unknown[],
): { page: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last ? encodeCursor(keyOf(last)) : null };
}

/**
 * A page's JSON (`{"items": [...], "next_cursor": ...}`) from its items' JSON texts, written straight into one
 * Buffer: joining the texts first made a string of the whole page (100 KB for 100 devices) on the JS heap, and
 * Buffer.from copied it again.
 */
export function jsonPageBody(items: readonly string[], nextCursor: string | null): Buffer {
  const head = '{"items":[';
  const tail = `],"next_cursor":${JSON.stringify(nextCursor)}}`;
  let size = head.length + tail.length + Math.max(0, items.length - 1);
  for (const item of items) size += Buffer.byteLength(item);
  const body = Buffer.allocUnsafe(size);
  let at = body.write(head, 0, 'latin1');
  for (const [i, item] of items.entries()) {
    if (i > 0) body[at++] = 0x2c; // ','
    at += body.write(item, at);
  }
  body.write(tail, at);
  return body;
}
